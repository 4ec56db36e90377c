/** transaction.yaml: the Transaction's metadata, its spec, and optional inline changes. */
import { type HealthSpec, MAX_LOCK_TIMEOUT, MAX_TIMEOUT } from '../api/v1alpha1/index.ts';
import { type Diagnostic, fieldPath } from '../yaml/diagnostic.ts';
import { parseYamlFile } from '../yaml/yaml-file.ts';
import { checkChangeType, checkContent } from './change-fields.ts';
import { describeType, FieldReporter, type Fields } from './fields.ts';
import { checkDuration, checkHealth, checkKind, checkMetadata, reportMissing } from './header-fields.ts';
import type { LoadedFile } from './load-directory.ts';
import type { LocatedChange } from './located-change.ts';
import { dnsSubdomainProblem } from './names.ts';
import { checkTarget, inlineTargetPaths } from './target.ts';

/** The Transaction's own fields, as transaction.yaml states them. */
export interface TransactionHeader {
  name: string;
  /** Set only when transaction.yaml names one. */
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  serviceAccountName: string;
  lockTimeout?: string;
  timeout?: string;
  health?: HealthSpec;
}

export interface TransactionFile {
  /** Present only when the file has no problem at all. */
  header?: TransactionHeader;
  /** metadata.namespace when it is a valid name, even if other fields are not: later checks still run. */
  namespace?: string;
  /** Whether metadata.namespace is written at all (valid or not). */
  declaresNamespace: boolean;
  /** Valid inline changes, even if other fields are not. */
  inlineChanges: LocatedChange[];
  /** Inline changes written, valid or not. */
  inlineChangeCount: number;
  /** spec.serviceAccountName when it is a valid name, even if other fields are not. */
  serviceAccountName?: string;
  /** Reports a problem at metadata.namespace (or at metadata when it names none). */
  reportNamespace(message: string): void;
  /** Reports a problem at spec.serviceAccountName. */
  reportServiceAccount(message: string): void;
  /** Reports a problem about the file as a whole. */
  reportFile(message: string, code: 'no-changes'): void;
}

/**
 * Parses transaction.yaml of the directory `directoryName`, reporting every problem; undefined only
 * when the file is not a YAML mapping at all.
 */
export function parseTransactionFile(
  file: LoadedFile,
  directoryName: string,
  out: Diagnostic[],
): TransactionFile | undefined {
  const errorsBefore = out.length;
  const parsed = parseYamlFile(file.path, file.text);
  out.push(...parsed.diagnostics);
  const [document, extra] = parsed.documents;
  if (parsed.diagnostics.length > 0) return undefined;
  if (!document) {
    out.push({
      code: 'not-a-mapping',
      file: file.path,
      message: 'the file is empty; it must hold a Transaction',
    });
    return undefined;
  }
  if (extra) {
    out.push({
      code: 'invalid-value',
      file: file.path,
      document: extra.index,
      message: 'transaction.yaml must hold a single YAML document; put changes in change files',
    });
  }
  const r = new FieldReporter(file.path, document, false, out);
  const top = r.mapping(document.value, []);
  if (!top) return undefined;
  r.onlyKnownFields(top, ['apiVersion', 'kind', 'metadata', 'spec'], []);
  checkKind(r, top);
  const metadata =
    top.metadata === undefined ? reportMissing(r, ['metadata']) : r.mapping(top.metadata, ['metadata']);
  const spec = top.spec === undefined ? reportMissing(r, ['spec']) : r.mapping(top.spec, ['spec']);
  const meta = metadata ? checkMetadata(r, metadata, directoryName) : {};
  const specFields = spec ? checkSpec(r, spec) : undefined;
  const inlineChanges = spec ? checkInlineChanges(r, spec.changes) : [];
  const { name, ...otherMeta } = meta;
  const serviceAccountName = specFields?.serviceAccountName;
  const validServiceAccount =
    serviceAccountName !== undefined && !dnsSubdomainProblem(serviceAccountName)
      ? serviceAccountName
      : undefined;
  const valid = name !== undefined && specFields !== undefined && out.length === errorsBefore;
  return {
    ...(valid && { header: { name, ...otherMeta, ...specFields } }),
    ...(meta.namespace !== undefined && { namespace: meta.namespace }),
    declaresNamespace: metadata?.namespace !== undefined && metadata.namespace !== null,
    ...(validServiceAccount !== undefined && { serviceAccountName: validServiceAccount }),
    inlineChanges,
    inlineChangeCount: Array.isArray(spec?.changes) ? spec.changes.length : 0,
    reportNamespace: (message) =>
      r.report(
        'namespace-not-allowed',
        ['metadata', 'namespace'],
        message,
        meta.namespace !== undefined ? 'value' : 'parent',
      ),
    reportServiceAccount: (message) =>
      r.report('service-account-not-allowed', ['spec', 'serviceAccountName'], message),
    reportFile: (message, code) => out.push({ code, file: file.path, message }),
  };
}

type SpecFields = Pick<TransactionHeader, 'serviceAccountName' | 'lockTimeout' | 'timeout' | 'health'>;

function checkSpec(r: FieldReporter, spec: Fields): SpecFields | undefined {
  r.onlyKnownFields(spec, ['serviceAccountName', 'lockTimeout', 'timeout', 'health', 'changes'], ['spec']);
  const serviceAccountName = r.requiredString(spec, 'serviceAccountName', ['spec', 'serviceAccountName']);
  const saProblem = serviceAccountName === undefined ? undefined : dnsSubdomainProblem(serviceAccountName);
  if (saProblem) r.report('invalid-value', ['spec', 'serviceAccountName'], saProblem);
  const lockTimeout = checkDuration(r, spec.lockTimeout, ['spec', 'lockTimeout'], MAX_LOCK_TIMEOUT);
  const timeout = checkDuration(r, spec.timeout, ['spec', 'timeout'], MAX_TIMEOUT);
  const health = checkHealth(r, spec.health, timeout);
  if (serviceAccountName === undefined) return undefined;
  return {
    serviceAccountName,
    ...(lockTimeout !== undefined && { lockTimeout }),
    ...(timeout !== undefined && { timeout }),
    ...(health !== undefined && { health }),
  };
}

function checkInlineChanges(r: FieldReporter, changes: unknown): LocatedChange[] {
  if (changes === undefined || changes === null) return [];
  if (!Array.isArray(changes)) {
    r.report(
      'invalid-value',
      ['spec', 'changes'],
      `must be a list of changes, found ${describeType(changes)}`,
    );
    return [];
  }
  const located: LocatedChange[] = [];
  changes.forEach((item: unknown, index) => {
    const path = ['spec', 'changes', index];
    const change = r.mapping(item, path);
    if (!change) return;
    r.onlyKnownFields(change, ['target', 'type', 'content'], path);
    const type = checkChangeType(r, change.type, [...path, 'type']);
    const targetFields =
      change.target === undefined
        ? reportMissing(r, [...path, 'target'])
        : r.mapping(change.target, [...path, 'target']);
    if (targetFields)
      r.onlyKnownFields(targetFields, ['apiVersion', 'kind', 'name', 'namespace'], [...path, 'target']);
    const target = targetFields
      ? checkTarget(r, { top: targetFields, meta: targetFields }, inlineTargetPaths(index))
      : undefined;
    if (!type || !target) return;
    const content = checkContent(r, type, target, change.content, [...path, 'content']);
    if (!content.ok) return;
    located.push({
      change: { target, type, ...(content.content && { content: content.content }) },
      origin: `${r.file} ${fieldPath(path)}`,
      report: (code, message, field = 'name') =>
        r.report(
          code,
          field === 'namespace' ? [...path, 'target', 'namespace'] : [...path, 'target'],
          message,
        ),
    });
  });
  return located;
}

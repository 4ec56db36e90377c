/** transaction.yaml: the Transaction's metadata, its spec, and optional inline changes. */
import {
  API_VERSION,
  DEFAULT_TIMEOUT,
  GROUP,
  HEALTH_TARGETS,
  type HealthSpec,
  KIND,
  MAX_HEALTH_STABLE_FOR,
  MAX_HEALTH_TIMEOUT,
  MAX_LOCK_TIMEOUT,
  MAX_TIMEOUT,
} from '../api/v1alpha1/index.ts';
import { type Diagnostic, fieldPath } from '../yaml/diagnostic.ts';
import { type FieldPath, parseYamlFile } from '../yaml/yaml-file.ts';
import { checkChangeType, checkContent } from './change-fields.ts';
import { describeType, FieldReporter, type Fields } from './fields.ts';
import { checkAnalysis } from './health-analysis.ts';
import type { LoadedFile } from './load-directory.ts';
import type { LocatedChange } from './located-change.ts';
import { dnsLabelProblem, dnsSubdomainProblem, parseDuration } from './names.ts';
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

const MIN_DURATION_MS = 1000;

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

function reportMissing(r: FieldReporter, path: FieldPath): undefined {
  r.report('missing-field', path, 'is required', 'parent');
  return undefined;
}

function checkKind(r: FieldReporter, top: Fields): void {
  const apiVersion = r.requiredString(top, 'apiVersion', ['apiVersion']);
  const kind = r.requiredString(top, 'kind', ['kind']);
  if (kind !== undefined && kind !== KIND) {
    r.report('wrong-kind', ['kind'], `must be ${KIND}, found ${JSON.stringify(kind)}`);
  }
  if (apiVersion !== undefined && apiVersion !== API_VERSION) {
    r.report('wrong-kind', ['apiVersion'], `must be ${API_VERSION}, found ${JSON.stringify(apiVersion)}`);
  }
}

type MetadataFields = Pick<TransactionHeader, 'name' | 'namespace' | 'labels' | 'annotations'>;

function checkMetadata(r: FieldReporter, metadata: Fields, directoryName: string): Partial<MetadataFields> {
  r.onlyKnownFields(metadata, ['name', 'namespace', 'labels', 'annotations'], ['metadata']);
  const name = r.requiredString(metadata, 'name', ['metadata', 'name']);
  const namespace = r.optionalString(metadata, 'namespace', ['metadata', 'namespace']);
  const nameProblem = name === undefined ? undefined : dnsLabelProblem(name);
  if (nameProblem) r.report('invalid-value', ['metadata', 'name'], nameProblem);
  else if (name !== undefined && name !== directoryName) {
    r.report(
      'name-mismatch',
      ['metadata', 'name'],
      `must equal the directory name ${JSON.stringify(directoryName)}`,
    );
  }
  const namespaceProblem = namespace === undefined ? undefined : dnsLabelProblem(namespace);
  if (namespaceProblem) r.report('invalid-value', ['metadata', 'namespace'], namespaceProblem);
  const validNamespace = namespaceProblem ? undefined : namespace;
  const labels =
    metadata.labels === undefined ? undefined : r.stringMap(metadata.labels, ['metadata', 'labels']);
  const annotations =
    metadata.annotations === undefined
      ? undefined
      : r.stringMap(metadata.annotations, ['metadata', 'annotations']);
  for (const key of Object.keys(annotations ?? {})) {
    if (key.startsWith(`${GROUP}/`)) {
      r.report(
        'invalid-value',
        ['metadata', 'annotations', key],
        `${GROUP}/ annotations are reserved for Janus`,
        'key',
      );
    }
  }
  return {
    ...(name !== undefined && !nameProblem && { name }),
    ...(validNamespace !== undefined && { namespace: validNamespace }),
    ...(labels !== undefined && { labels }),
    ...(annotations !== undefined && { annotations }),
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

/** spec.health: which targets the gate waits for, for how long, and how long they must stay healthy. */
function checkHealth(r: FieldReporter, value: unknown, timeout: string | undefined): HealthSpec | undefined {
  if (value === undefined || value === null) return undefined;
  const path = ['spec', 'health'];
  const health = r.mapping(value, path);
  if (!health) return undefined;
  r.onlyKnownFields(health, ['targets', 'timeout', 'stableFor', 'analysis'], path);
  let targets: HealthSpec['targets'];
  if (health.targets !== undefined && health.targets !== null) {
    const known = HEALTH_TARGETS as readonly unknown[];
    if (known.includes(health.targets)) targets = health.targets as HealthSpec['targets'];
    else {
      r.report(
        'invalid-value',
        [...path, 'targets'],
        `must be one of ${HEALTH_TARGETS.join(', ')}, found ${JSON.stringify(health.targets)}`,
      );
    }
  }
  const healthTimeout = checkDuration(r, health.timeout, [...path, 'timeout'], MAX_HEALTH_TIMEOUT);
  const stableFor = checkStableFor(r, health.stableFor, [...path, 'stableFor'], timeout);
  const analysis = checkAnalysis(r, health.analysis, [...path, 'analysis'], stableFor);
  return {
    ...(targets !== undefined && { targets }),
    ...(healthTimeout !== undefined && { timeout: healthTimeout }),
    ...(stableFor !== undefined && { stableFor }),
    ...(analysis !== undefined && { analysis }),
  };
}

/** The bake window: 0s to 1h, and shorter than the transaction's timeout, which it must fit in. */
function checkStableFor(
  r: FieldReporter,
  value: unknown,
  path: string[],
  timeout: string | undefined,
): string | undefined {
  const stableFor = checkDuration(r, value, path, MAX_HEALTH_STABLE_FOR, 0);
  if (stableFor === undefined) return undefined;
  const within = timeout ?? DEFAULT_TIMEOUT;
  if ((parseDuration(stableFor) ?? 0) >= (parseDuration(within) ?? 0)) {
    r.report(
      'invalid-value',
      path,
      `must be less than spec.timeout (${within}): the bake window must fit in the transaction`,
    );
    return undefined;
  }
  return stableFor;
}

function checkDuration(
  r: FieldReporter,
  value: unknown,
  path: string[],
  max: string,
  minMs = MIN_DURATION_MS,
): string | undefined {
  if (value === undefined || value === null) return undefined;
  const ms = typeof value === 'string' ? parseDuration(value) : undefined;
  if (typeof value !== 'string' || ms === undefined) {
    r.report(
      'invalid-value',
      path,
      `must be a duration such as "90s", "5m" or "1h30m", found ${describeType(value)}`,
    );
    return undefined;
  }
  if (ms < minMs) {
    r.report('invalid-value', path, `must be at least ${minMs / 1000}s, found ${JSON.stringify(value)}`);
    return undefined;
  }
  if (ms > (parseDuration(max) ?? 0)) {
    r.report('invalid-value', path, `must be at most ${max}, found ${JSON.stringify(value)}`);
    return undefined;
  }
  return value;
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

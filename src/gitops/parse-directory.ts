/**
 * Turns one transaction directory into a Transaction ready to create, or into the complete list
 * of what is wrong with it. Never throws for bad input.
 */
import {
  ANNOTATION_SOURCE_PATH,
  ANNOTATION_SOURCE_REPOSITORY,
  ANNOTATION_SOURCE_REVISION,
  ANNOTATION_SOURCE_SEQUENCE,
  API_VERSION,
  type Change,
  KIND,
  type ObjectMeta,
  type Transaction,
} from '../api/v1alpha1/index.ts';
import { compareDiagnostics, type Diagnostic } from '../yaml/diagnostic.ts';
import { parseChangeFile } from './change-file.ts';
import type { DirectoryReader } from './directory-reader.ts';
import { type LoadedDirectory, loadDirectory } from './load-directory.ts';
import type { LocatedChange } from './located-change.ts';
import { dnsLabelProblem } from './names.ts';
import { type ParseLimits, type ParseOptions, resolveLimits, type SourceInfo } from './options.ts';
import { namespaceRefusal, type RepositoryPolicy, serviceAccountRefusal } from './policy.ts';
import { describeTarget, targetKey } from './target.ts';
import { parseTransactionFile, type TransactionFile, type TransactionHeader } from './transaction-file.ts';

export interface RollbackRequest {
  /** The ROLLBACK file's text, trimmed; may be empty. */
  reason: string;
  file: string;
}

interface ParsedCommon {
  /** Repository-relative path of the directory. */
  path: string;
  /** The Transaction's name (the directory name). */
  name: string;
  /** The namespace it would live in, when known (from transaction.yaml or the default). */
  namespace: string;
  /** Present when the directory holds a ROLLBACK file. */
  rollback?: RollbackRequest;
}

/**
 * A parsed directory. `T` is the form its Transaction is kept in: whole, or held for later
 * (held-transaction.ts); what decides on a directory needs only its metadata.
 */
export type ParseResult<T extends Pick<Transaction, 'metadata'> = Transaction> =
  | (ParsedCommon & { ok: true; transaction: T })
  | (ParsedCommon & { ok: false; diagnostics: Diagnostic[] });

/** Reads and parses the directory at `path` (repository-relative) through `reader`. */
export async function parseTransactionDirectory(
  reader: DirectoryReader,
  path: string,
  options: ParseOptions,
  source?: SourceInfo,
): Promise<ParseResult> {
  const limits = resolveLimits(options.limits);
  return parseLoadedDirectory(await loadDirectory(reader, path, limits), options, source);
}

/** The pure part: rules over files already read. */
export function parseLoadedDirectory(
  dir: LoadedDirectory,
  options: ParseOptions,
  source?: SourceInfo,
): ParseResult {
  const limits = resolveLimits(options.limits);
  const diagnostics = [...dir.diagnostics];
  const nameProblem = dnsLabelProblem(dir.name);
  if (nameProblem) {
    diagnostics.push({
      code: 'invalid-directory-name',
      file: dir.path,
      message: `the directory name is the Transaction's name and ${nameProblem}`,
    });
  }
  let transactionFile: TransactionFile | undefined;
  const changes: LocatedChange[] = [];
  let rollback: RollbackRequest | undefined;
  for (const file of dir.files) {
    if (file.role.role === 'transaction') transactionFile = parseTransactionFile(file, dir.name, diagnostics);
    else if (file.role.role === 'change')
      changes.push(...parseChangeFile(file, file.role.type, options.policy.sopsKinds, diagnostics));
    else rollback = { reason: file.text.trim(), file: file.path };
  }
  const { policy } = options;
  const namespace = transactionFile?.namespace ?? policy.defaultNamespace;
  const common: ParsedCommon = { path: dir.path, name: dir.name, namespace, ...(rollback && { rollback }) };
  if (transactionFile) {
    // Inline changes come first, then change files in lexicographic order (dir.files is sorted).
    changes.unshift(...transactionFile.inlineChanges);
    checkPolicy(transactionFile, namespace, policy);
    checkChangeCount(transactionFile, dir, changes.length, limits, diagnostics);
  }
  checkTargetNamespaces(changes, policy);
  checkDuplicateTargets(changes, namespace);
  const header = transactionFile?.header;
  if (!header || diagnostics.length > 0) {
    return { ...common, ok: false, diagnostics: diagnostics.sort(compareDiagnostics) };
  }
  return { ...common, ok: true, transaction: buildTransaction(header, namespace, changes, dir.path, source) };
}

/** The Transaction's namespace and ServiceAccount, against the repository's policy. */
function checkPolicy(file: TransactionFile, namespace: string, policy: RepositoryPolicy): void {
  // A namespace written but invalid is reported as such; the checks need a namespace to run.
  if (file.namespace === undefined && file.declaresNamespace) return;
  const refusal = namespaceRefusal(policy, namespace);
  if (refusal) {
    const which = `${file.namespace === undefined ? 'the default namespace ' : 'namespace '}${JSON.stringify(namespace)}`;
    file.reportNamespace(`${which} ${refusal}`);
  }
  if (file.serviceAccountName !== undefined) {
    const saRefusal = serviceAccountRefusal(policy, namespace, file.serviceAccountName);
    if (saRefusal) file.reportServiceAccount(saRefusal);
  }
}

/**
 * A namespaced target must be in a namespace the repository may use. A target that names none
 * is in the Transaction's namespace, checked above; one of a known cluster-scoped kind cannot
 * name one (checkTarget refuses it) and stays allowed: its ServiceAccount's RBAC bounds it.
 */
function checkTargetNamespaces(changes: readonly LocatedChange[], policy: RepositoryPolicy): void {
  for (const located of changes) {
    const namespace = located.change.target.namespace;
    if (namespace === undefined) continue;
    const refusal = namespaceRefusal(policy, namespace);
    if (refusal) {
      located.report(
        'target-namespace-not-allowed',
        `the target's namespace ${JSON.stringify(namespace)} ${refusal}`,
        'namespace',
      );
    }
  }
}

function checkChangeCount(
  file: TransactionFile,
  dir: LoadedDirectory,
  count: number,
  limits: ParseLimits,
  diagnostics: Diagnostic[],
): void {
  // Changes that are written but invalid are reported where they are; this is about none being written.
  if (count === 0 && file.inlineChangeCount === 0 && dir.changeFileCount === 0) {
    file.reportFile(
      'the transaction has no changes: add spec.changes or change files such as 10-config.patch.yaml',
      'no-changes',
    );
  }
  if (count > limits.maxChanges) {
    diagnostics.push({
      code: 'too-many-changes',
      file: dir.path,
      message: `the transaction has ${count} changes; at most ${limits.maxChanges} are allowed`,
    });
  }
}

function checkDuplicateTargets(changes: readonly LocatedChange[], namespace: string): void {
  const seen = new Map<string, LocatedChange>();
  for (const located of changes) {
    const key = targetKey(located.change.target, namespace);
    const first = seen.get(key);
    if (!first) {
      seen.set(key, located);
      continue;
    }
    located.report(
      'duplicate-target',
      `${describeTarget(located.change.target, namespace)} is already changed by ${first.origin}; ` +
        'each resource may appear in one change only',
    );
  }
}

function buildTransaction(
  header: TransactionHeader,
  namespace: string,
  changes: readonly LocatedChange[],
  path: string,
  source: SourceInfo | undefined,
): Transaction {
  const annotations: Record<string, string> = { ...header.annotations };
  if (source) {
    annotations[ANNOTATION_SOURCE_REPOSITORY] = source.repository;
    annotations[ANNOTATION_SOURCE_REVISION] = `${source.branch}@sha1:${source.commit}`;
    annotations[ANNOTATION_SOURCE_PATH] = path;
    if (source.sequence !== undefined) annotations[ANNOTATION_SOURCE_SEQUENCE] = String(source.sequence);
  }
  const metadata: ObjectMeta = {
    name: header.name,
    namespace,
    ...(header.labels && { labels: header.labels }),
    ...(Object.keys(annotations).length > 0 && { annotations }),
  };
  const spec = {
    serviceAccountName: header.serviceAccountName,
    ...(header.lockTimeout !== undefined && { lockTimeout: header.lockTimeout }),
    ...(header.timeout !== undefined && { timeout: header.timeout }),
    ...(header.health !== undefined && { health: header.health }),
    changes: changes.map((c): Change => c.change),
  };
  return { apiVersion: API_VERSION, kind: KIND, metadata, spec };
}

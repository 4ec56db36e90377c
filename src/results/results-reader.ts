/**
 * Reading the results branch back: what a result file says (phase, source), a fingerprint that
 * tells whether two records describe the same outcome, and snapshots of the branch at one tip.
 *
 * The results branch is the authority on what was applied: the materializer reads it before
 * applying a directory, and the reporter before writing an outcome, so neither acts twice, also
 * across restarts and replicas.
 */
import type { ObjectStore } from '../git/object-store.ts';
import type { GitRepository, GitSession } from '../git/repository.ts';
import { parseYamlValue } from '../yaml/yaml-file.ts';
import { resultPath } from './result-context.ts';

/** What the results branch says about one transaction directory. */
export interface RecordedOutcome {
  /** A Transaction phase, or Rejected / Baseline. */
  phase: string;
  /** The source revision, "<branch>@sha1:<hex>", when recorded. */
  revision?: string;
  /** The source directory, when recorded. */
  path?: string;
  /** The uid of the Transaction the record is about, when recorded. */
  uid?: string;
}

/** The file listing the directories a first run recorded as baseline (never applied). */
export const BASELINE_FILE = 'baseline.yaml';
export const BASELINE_KIND = 'TransactionBaseline';

/** The directory paths a baseline file lists; empty when the text is not one. */
export function parseBaselineFile(text: string): Set<string> {
  // Within the YAML limits: anyone who can push to the results branch could plant a bomb here.
  const value = parseYamlValue(text);
  const directories = (value as { directories?: unknown } | null)?.directories;
  return new Set(Array.isArray(directories) ? directories.filter((d) => typeof d === 'string') : []);
}

/** The fields of a result file (results/<ns>/<name>.yaml) that decisions use. */
export interface ResultDocument {
  phase: string;
  transaction?: { namespace?: string; name?: string; uid?: string };
  progress?: string;
  message?: string;
  source?: { repository?: string; revision?: string; path?: string };
  changes?: Array<{ outcome?: string; error?: string }>;
}

/** Parses a result file; undefined when it is not one (unparseable, or no phase). */
export function parseResultFile(text: string): ResultDocument | undefined {
  const value = parseYamlValue(text);
  if (typeof value !== 'object' || value === null) return undefined;
  const doc = value as Partial<ResultDocument>;
  return typeof doc.phase === 'string' ? (doc as ResultDocument) : undefined;
}

export function recordedOutcome(doc: ResultDocument): RecordedOutcome {
  return {
    phase: doc.phase,
    ...(typeof doc.source?.revision === 'string' && { revision: doc.source.revision }),
    ...(typeof doc.source?.path === 'string' && { path: doc.source.path }),
    ...(typeof doc.transaction?.uid === 'string' && { uid: doc.transaction.uid }),
  };
}

/**
 * Two records with the same fingerprint describe the same outcome, whoever wrote them and with
 * whichever Janus version. A rollback in progress is one outcome however far it got: its start
 * is what the audit trail records.
 */
export function outcomeFingerprint(doc: ResultDocument): string {
  if (doc.phase === 'RollingBack') return 'RollingBack';
  // Read back from the branch, where anyone who may push can write anything: never throws.
  const changes = (Array.isArray(doc.changes) ? doc.changes : []).map((c) => [
    c?.outcome ?? '',
    c?.error ?? '',
  ]);
  return JSON.stringify([doc.phase, doc.progress ?? '', doc.message ?? '', changes]);
}

/** The fingerprint of a result file's text; undefined when it is not a result file. */
export function fingerprintOf(text: string): string | undefined {
  const doc = parseResultFile(text);
  return doc && outcomeFingerprint(doc);
}

/** The results branch at one tip. Use within the GitRepository.run that produced it. */
export interface ResultsSnapshot {
  /** The tip read; undefined when the branch does not exist yet. */
  readonly tip: string | undefined;
  /** The text of a file, or undefined when there is none (or, given `maxBytes`, a larger one). */
  read(path: string, maxBytes?: number): Promise<string | undefined>;
  /** What results/<namespace>/<name>.yaml records, or undefined when nothing is recorded. */
  outcome(namespace: string, name: string): Promise<RecordedOutcome | undefined>;
  /** The directory paths recorded as baseline at the first run. */
  baseline(): Promise<ReadonlySet<string>>;
}

/** Fetches `branch` and returns a snapshot of its tip. */
export async function readResultsSnapshot(session: GitSession, branch: string): Promise<ResultsSnapshot> {
  return resultsSnapshotAt(session.store, await session.fetch(branch));
}

/** A snapshot of the results branch at `tip` (undefined: the branch does not exist yet). */
export async function resultsSnapshotAt(
  store: ObjectStore,
  tip: string | undefined,
): Promise<ResultsSnapshot> {
  const rootTree = tip === undefined ? undefined : (await store.readCommit(tip)).tree;
  // One results/<ns>/ tree can list thousands of files: each directory is read once per snapshot.
  const directories = new Map<string, Promise<Map<string, string>>>();
  const listing = (dir: string): Promise<Map<string, string>> => {
    let entries = directories.get(dir);
    if (!entries) {
      entries = (async () => {
        if (rootTree === undefined) return new Map<string, string>();
        const entry = await store.resolvePath(rootTree, dir);
        if (entry?.type !== 'tree') return new Map<string, string>();
        const tree = await store.readTree(entry.oid);
        return new Map(tree.filter((e) => e.type === 'blob').map((e) => [e.path, e.oid]));
      })();
      directories.set(dir, entries);
    }
    return entries;
  };
  const read = async (path: string, maxBytes?: number): Promise<string | undefined> => {
    const slash = path.lastIndexOf('/');
    const oid = (await listing(slash < 0 ? '' : path.slice(0, slash))).get(path.slice(slash + 1));
    if (oid === undefined) return undefined;
    if (maxBytes === undefined) return new TextDecoder().decode(await store.readBlob(oid));
    const blob = await store.readBlobWithin(oid, maxBytes);
    return blob.ok ? new TextDecoder().decode(blob.bytes) : undefined;
  };
  let baseline: Promise<Set<string>> | undefined;
  return {
    tip,
    read,
    baseline() {
      baseline ??= read(BASELINE_FILE).then((text) =>
        text === undefined ? new Set() : parseBaselineFile(text),
      );
      return baseline;
    },
    async outcome(namespace, name) {
      const text = await read(resultPath(namespace, name));
      const doc = text === undefined ? undefined : parseResultFile(text);
      // A file that is there but unreadable still means "recorded": never apply over it.
      if (text !== undefined && !doc) return { phase: 'Unknown' };
      return doc && recordedOutcome(doc);
    },
  };
}

/** Fetches the results branch and reads the result files of `keys` ("<namespace>/<name>"). */
export async function readResultFiles(
  repository: GitRepository,
  branch: string,
  keys: readonly string[],
): Promise<Map<string, string>> {
  return repository.run(async (session) => {
    const snapshot = await readResultsSnapshot(session, branch);
    const files = new Map<string, string>();
    for (const key of keys) {
      const slash = key.indexOf('/');
      const text = await snapshot.read(resultPath(key.slice(0, slash), key.slice(slash + 1)));
      if (text !== undefined) files.set(key, text);
    }
    return files;
  });
}

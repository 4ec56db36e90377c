/**
 * Reads what the materializer decides on, inside one repository operation: each changed
 * directory parsed at its commit, which of its files changed, and what the results branch
 * records about it. Only the directories Git reports as changed are read.
 */
import type { ChangeSet } from '../git/changes.ts';
import type { GitSession } from '../git/repository.ts';
import type { RecordedOutcome, ResultsSnapshot } from '../results/results-reader.ts';
import { joinPath } from './directory-reader.ts';
import { ROLLBACK_FILE, TRANSACTION_FILE } from './file-names.ts';
import { type DirectoryFacts, PHASE_BASELINE } from './materialize-decision.ts';
import { dnsLabelProblem } from './names.ts';
import { DEFAULT_LIMITS, type ParseOptions } from './options.ts';
import { parseTransactionDirectory } from './parse-directory.ts';
import { TreeCache } from './tree-cache.ts';
import { parseYamlValue } from './yaml-file.ts';

export interface GatheredFacts extends DirectoryFacts {
  /** What the results branch recorded when the poll started. */
  recorded: RecordedOutcome | undefined;
}

export interface FactOptions {
  parse: ParseOptions;
  /** Repository (without credentials) and branch, recorded as the Transactions' source. */
  repository: string;
  branch: string;
}

/** Facts for every directory change of `changes`, in Git order (commit by commit, then by name). */
export async function gatherFacts(
  session: GitSession,
  changes: ChangeSet,
  results: ResultsSnapshot,
  options: FactOptions,
): Promise<GatheredFacts[]> {
  const { store } = session;
  const trees = new TreeCache(store);
  const gathered: GatheredFacts[] = [];
  // The tree each commit's changes are relative to: its predecessor on the branch, or nothing
  // when listChanges compared the tip with no base at all.
  const hasBase =
    changes.from !== undefined && changes.history !== 'initial' && changes.history !== 'unknown-base';
  let beforeTree = hasBase && changes.from ? (await store.readCommit(changes.from)).tree : undefined;
  for (const { commit, directories } of changes.commits) {
    for (const change of directories) {
      if (change.kind === 'removed') continue;
      const parsed = await parseTransactionDirectory(trees.reader(commit.tree), change.path, options.parse, {
        repository: options.repository,
        branch: options.branch,
        commit: commit.oid,
      });
      const files = await diffFiles(trees, beforeTree, commit.tree, change.path);
      const namespace =
        change.kind === 'modified' && beforeTree !== undefined
          ? await namespaceAt(trees, beforeTree, change.path, options.parse.policy.defaultNamespace)
          : parsed.namespace;
      gathered.push({
        path: change.path,
        name: change.name,
        kind: change.kind,
        commit: commit.oid,
        parsed,
        namespace,
        changedFiles: files.changed,
        rollbackAdded: files.rollbackAdded,
        recorded:
          (await results.outcome(namespace, change.name)) ??
          ((await results.baseline()).has(change.path)
            ? { phase: PHASE_BASELINE, path: change.path }
            : undefined),
      });
    }
    beforeTree = commit.tree;
  }
  return gathered;
}

/** Files of the directory at `path` that differ between two commit trees. */
export async function diffFiles(
  trees: TreeCache,
  beforeTree: string | undefined,
  afterTree: string,
  path: string,
): Promise<{ changed: string[]; rollbackAdded: boolean }> {
  const before = await filesAt(trees, beforeTree, path);
  const after = await filesAt(trees, afterTree, path);
  const names = [...new Set([...before.keys(), ...after.keys()])].sort();
  return {
    changed: names.filter((n) => before.get(n) !== after.get(n)),
    rollbackAdded: after.has(ROLLBACK_FILE) && !before.has(ROLLBACK_FILE),
  };
}

async function filesAt(
  trees: TreeCache,
  tree: string | undefined,
  path: string,
): Promise<Map<string, string>> {
  if (tree === undefined) return new Map();
  const entry = await trees.resolve(tree, path);
  if (entry?.type !== 'tree') return new Map();
  return new Map([...(await trees.entries(entry.oid)).values()].map((e) => [e.path, e.oid]));
}

/**
 * The namespace transaction.yaml named in a tree: its metadata.namespace when that is a valid
 * name, else the default — the same rule the parser applies.
 */
export async function namespaceAt(
  trees: TreeCache,
  tree: string,
  path: string,
  fallback: string,
): Promise<string> {
  const file = joinPath(path, TRANSACTION_FILE);
  const entry = await trees.resolve(tree, file);
  if (entry?.type !== 'blob') return fallback;
  try {
    // The same bounds as the parser: no oversized blob is inflated, no hostile YAML parsed.
    const content = await trees.reader(tree).read(file, DEFAULT_LIMITS.maxFileBytes);
    if (!content.ok) return fallback;
    const text = new TextDecoder().decode(content.bytes);
    const doc = parseYamlValue(text) as { metadata?: { namespace?: unknown } } | null | undefined;
    const namespace = doc?.metadata?.namespace;
    return typeof namespace === 'string' && !dnsLabelProblem(namespace) ? namespace : fallback;
  } catch {
    return fallback;
  }
}

/** The paths of every transaction directory in `tree`, sorted. */
export async function listDirectories(session: GitSession, tree: string, root: string): Promise<string[]> {
  const trees = new TreeCache(session.store);
  const folder = await trees.resolve(tree, root);
  if (folder?.type !== 'tree') return [];
  return [...(await trees.entries(folder.oid)).values()]
    .filter((e) => e.type === 'tree')
    .map((e) => joinPath(root, e.path))
    .sort();
}

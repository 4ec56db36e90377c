/**
 * What changed on the watched branch since the last processed commit: the new commits, oldest
 * first, and per commit the transaction directories it added, modified or removed.
 *
 * The branch is followed along first parents, the way `git log --first-parent` shows a branch
 * that takes pull requests: a merge commit is the moment a directory lands; commits on the
 * merged branch are not visited (an unmerged or half-done branch is never seen). Subtrees whose
 * oid did not change are never read, so the cost is O(new commits), not O(repository).
 */

import type { CommitInfo } from './commit-info.ts';
import { readingCommit } from './input-limits.ts';
import type { ObjectStore } from './object-store.ts';
import type { GitSession } from './repository.ts';

export type DirectoryChangeKind = 'added' | 'modified' | 'removed';

export interface DirectoryChange {
  /** The directory name: the Transaction's name. */
  name: string;
  /** Repository-relative path, e.g. "transactions/deploy-v2". */
  path: string;
  kind: DirectoryChangeKind;
}

export interface CommitChanges {
  commit: CommitInfo;
  /** Sorted by name. */
  directories: DirectoryChange[];
}

/**
 * - `initial`: no previous commit; one entry at the tip listing every directory as added.
 * - `unchanged`: the tip is the previous commit.
 * - `linear`: the previous commit is on the tip's first-parent chain; one entry per new commit.
 * - `merged`: the previous commit is an ancestor, but not along first parents (someone merged the
 *   branch into a local copy and pushed); one entry at the tip, diffed against the previous commit.
 * - `rewritten`: the branch was force-pushed and the previous commit is no longer in its history;
 *   one entry at the tip, diffed against the previous commit's tree. Directories already
 *   materialized must be recognized by their outcome, not by this diff.
 * - `unknown-base`: the previous commit is neither in the branch's history nor in the cache; one
 *   entry at the tip listing every directory as added.
 */
export type HistoryShape = 'initial' | 'unchanged' | 'linear' | 'merged' | 'rewritten' | 'unknown-base';

export interface ChangeSet {
  from: string | undefined;
  to: string;
  history: HistoryShape;
  /** Oldest first. Commits that changed no directory are included, with an empty list. */
  commits: CommitChanges[];
}

export interface ChangeOptions {
  /** The watched branch, whose history is deepened when the cache holds too little of it. */
  branch: string;
  /** Folder of the transaction directories. Default "transactions". */
  root?: string;
  /** Longest history walked back from the tip before giving up on finding `from`. Default 10000. */
  maxCommits?: number;
}

const DEFAULT_MAX_COMMITS = 10_000;
const FIRST_DEEPEN = 64;

/** Lists what changed between `from` (the last processed commit, if any) and `to` (the new tip). */
export async function listChanges(
  session: GitSession,
  from: string | undefined,
  to: string,
  options: ChangeOptions,
): Promise<ChangeSet> {
  const { store } = session;
  const root = normalizeRoot(options.root ?? 'transactions');
  const max = options.maxCommits ?? DEFAULT_MAX_COMMITS;
  const tip = await readingCommit(to, () => store.readCommit(to));
  const single = async (history: HistoryShape, baseTree: string | undefined): Promise<ChangeSet> => ({
    from,
    to,
    history,
    commits: [
      {
        commit: tip,
        directories: await readingCommit(to, () => diffDirectories(store, baseTree, tip.tree, root)),
      },
    ],
  });
  if (from === undefined) return single('initial', undefined);
  if (from === to) return { from, to, history: 'unchanged', commits: [] };
  const chain = await firstParentChain(session, options.branch, from, tip, max);
  if (chain) {
    const commits: CommitChanges[] = [];
    let parentTree = (await store.readCommit(from)).tree;
    for (const commit of chain) {
      const directories = await readingCommit(commit.oid, () =>
        diffDirectories(store, parentTree, commit.tree, root),
      );
      commits.push({ commit, directories });
      parentTree = commit.tree;
    }
    return { from, to, history: 'linear', commits };
  }
  if (!(await store.hasObject(from))) return single('unknown-base', undefined);
  const fromTree = (await store.readCommit(from)).tree;
  return single((await isAncestor(store, from, to, max)) ? 'merged' : 'rewritten', fromTree);
}

/**
 * The commits from just after `from` up to `tip` along first parents, oldest first; undefined
 * when `from` is not on that chain. Deepens a shallow cache as the walk reaches its edge.
 */
async function firstParentChain(
  session: GitSession,
  branch: string,
  from: string,
  tip: CommitInfo,
  max: number,
): Promise<CommitInfo[] | undefined> {
  const chain: CommitInfo[] = [];
  let deepenBy = FIRST_DEEPEN;
  for (let commit = tip; chain.length < max; ) {
    chain.push(commit);
    const parent = commit.parents[0];
    if (parent === undefined) return undefined; // reached the root without meeting `from`
    while (!(await session.store.hasObject(parent))) {
      if (!(await session.deepen(branch, deepenBy))) return undefined;
      deepenBy *= 2;
    }
    if (parent === from) return chain.reverse();
    commit = await readingCommit(parent, () => session.store.readCommit(parent));
  }
  return undefined;
}

/**
 * Whether `ancestor` is reachable from `oid` within `max` commits, breadth first (as
 * isomorphic-git's isDescendent, which would read each commit whole: see ObjectStore.readCommit).
 */
async function isAncestor(store: ObjectStore, ancestor: string, oid: string, max: number): Promise<boolean> {
  const seen = new Set([oid]);
  const queue = [oid];
  for (let at = 0; at < queue.length && at < max; at++) {
    const commit = await store.findCommit(queue[at] ?? '');
    for (const parent of commit?.parents ?? []) {
      if (parent === ancestor) return true;
      if (!seen.has(parent)) {
        seen.add(parent);
        queue.push(parent);
      }
    }
  }
  return false;
}

/** Directories under `root` that differ between two commit trees; unchanged subtrees are skipped by oid. */
export async function diffDirectories(
  store: ObjectStore,
  beforeTree: string | undefined,
  afterTree: string,
  root: string,
): Promise<DirectoryChange[]> {
  const before = beforeTree === undefined ? undefined : await subtreeOid(store, beforeTree, root);
  const after = await subtreeOid(store, afterTree, root);
  if (before === after) return [];
  const beforeDirs = await directoryOids(store, before);
  const afterDirs = await directoryOids(store, after);
  const names = [...new Set([...beforeDirs.keys(), ...afterDirs.keys()])].sort();
  const changes: DirectoryChange[] = [];
  for (const name of names) {
    const was = beforeDirs.get(name);
    const is = afterDirs.get(name);
    if (was === is) continue;
    const kind: DirectoryChangeKind = was === undefined ? 'added' : is === undefined ? 'removed' : 'modified';
    changes.push({ name, path: root === '' ? name : `${root}/${name}`, kind });
  }
  return changes;
}

async function subtreeOid(store: ObjectStore, tree: string, root: string): Promise<string | undefined> {
  const entry = await store.resolvePath(tree, root);
  return entry?.type === 'tree' ? entry.oid : undefined;
}

/** Subdirectories of a tree by name; files directly under the root (a README) are not transactions. */
async function directoryOids(store: ObjectStore, tree: string | undefined): Promise<Map<string, string>> {
  if (tree === undefined) return new Map();
  const entries = await store.readTree(tree);
  return new Map(entries.filter((e) => e.type === 'tree').map((e) => [e.path, e.oid]));
}

function normalizeRoot(root: string): string {
  return root
    .split('/')
    .filter((p) => p !== '' && p !== '.')
    .join('/');
}

/**
 * The commits that made a directory what it is at a commit: walking the watched branch back
 * along first parents (the way the poller reads it), every commit whose tree holds a different
 * version of the directory than its parent's, back to the commit that created it, or back to the
 * commit that added a given file (a ROLLBACK request). Subtrees are compared by oid, so a commit
 * that changed nothing under the directory costs three tree lookups and is not listed.
 */
import type { GitSession } from '../git/repository.ts';
import { joinPath } from './directory-reader.ts';
import type { TreeCache } from './tree-cache.ts';

/** Commits walked back from one directory's commit before giving up (and refusing it). */
export const DEFAULT_MAX_DIRECTORY_HISTORY = 2000;
const FIRST_DEEPEN = 64;

export interface DirectoryHistory {
  /** Newest first. */
  commits: string[];
  /** False when the walk stopped at the bound, or at a shallow edge it could not deepen. */
  complete: boolean;
}

export interface HistoryOptions {
  branch: string;
  /** Stop at the commit that added this file of the directory instead of the directory itself. */
  sinceFile?: string;
  max?: number;
  /**
   * Walks already done in this poll, by commit, path and file: a walk that reaches a commit
   * walked before stops there and takes the rest, so a directory changed by n commits of one poll
   * costs n steps, not n² (directories are decided in Git order, oldest first).
   */
  memo?: Map<string, DirectoryHistory>;
}

export async function directoryHistory(
  session: GitSession,
  trees: TreeCache,
  commit: string,
  path: string,
  options: HistoryOptions,
): Promise<DirectoryHistory> {
  const { store } = session;
  const max = options.max ?? DEFAULT_MAX_DIRECTORY_HISTORY;
  const watched = options.sinceFile === undefined ? path : joinPath(path, options.sinceFile);
  const key = (oid: string) => `${oid}:${path}:${options.sinceFile ?? ''}`;
  const done = (history: DirectoryHistory): DirectoryHistory => {
    options.memo?.set(key(commit), history);
    return history;
  };
  const commits: string[] = [];
  let deepenBy = FIRST_DEEPEN;
  /** Deepens a shallow cache until it holds `oid`; false when the server has no more to give. */
  const reach = async (oid: string): Promise<boolean> => {
    while (!(await store.hasObject(oid))) {
      if (!(await session.deepen(options.branch, deepenBy))) return false;
      deepenBy *= 2;
    }
    return true;
  };
  if (!(await reach(commit))) return done({ commits, complete: false });
  let current = await store.readCommit(commit);
  let version = await oidAt(trees, current.tree, path);
  for (let walked = 0; walked < max; walked++) {
    const parentOid = current.parents[0];
    if (parentOid === undefined) {
      commits.push(current.oid); // the root commit created it
      return done({ commits, complete: true });
    }
    if (!(await reach(parentOid))) return done({ commits, complete: false });
    const parent = await store.readCommit(parentOid);
    const before = await oidAt(trees, parent.tree, path);
    if (before !== version) commits.push(current.oid);
    if ((await oidAt(trees, parent.tree, watched)) === undefined) return done({ commits, complete: true });
    const known = options.memo?.get(key(parentOid));
    if (known) return done({ commits: [...commits, ...known.commits], complete: known.complete });
    current = parent;
    version = before;
  }
  return done({ commits, complete: false });
}

async function oidAt(trees: TreeCache, tree: string, path: string): Promise<string | undefined> {
  return (await trees.resolve(tree, path))?.oid;
}

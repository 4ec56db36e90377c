/**
 * The commits a source skipped (docs/sources.md, "What a commit does"): when several commits land
 * at once, or while its transaction ran, the newest is applied and those between the one it last
 * attempted and the newest are recorded as superseded. Only the commits that changed the source's
 * folder or its file are: a commit that touched neither left its render alone as far as Git
 * shows (a kustomization's bases elsewhere are not followed), and a status on every commit of the
 * branch for every source would bury the ones that matter. First parents only, as the branch
 * moved; none when the last attempted commit is not an ancestor (the branch was rewritten).
 */
import type { ObjectStore } from '../git/object-store.ts';

/** Commits walked back from the newest before giving up on finding the last attempted one. */
export const MAX_WALK = 1000;
/** Superseded commits recorded at once, the newest first; older ones are only counted. */
export const MAX_SUPERSEDED = 32;

export interface Superseded {
  /** Newest first, at most MAX_SUPERSEDED. */
  commits: string[];
  /** Superseded commits past those. */
  more: number;
}

/**
 * The commits strictly between `from` (the last attempted) and `to` (the newest) on `to`'s
 * first-parent chain that changed one of `paths` (repository-relative; '' is the whole tree).
 */
export async function supersededCommits(
  store: Pick<ObjectStore, 'readCommit' | 'resolvePath'>,
  from: string,
  to: string,
  paths: readonly string[],
): Promise<Superseded> {
  const between: { oid: string; tree: string; parent: string | undefined }[] = [];
  let next = (await store.readCommit(to)).parents[0];
  for (let steps = 0; next !== undefined && next !== from; steps++) {
    if (steps >= MAX_WALK) return { commits: [], more: 0 };
    let commit: Awaited<ReturnType<ObjectStore['readCommit']>>;
    try {
      commit = await store.readCommit(next);
    } catch {
      return { commits: [], more: 0 }; // history not fetched (shallow): nothing is known to be skipped
    }
    between.push({ oid: commit.oid, tree: commit.tree, parent: commit.parents[0] });
    next = commit.parents[0];
  }
  if (next !== from) return { commits: [], more: 0 };
  const changed: string[] = [];
  for (const commit of between) {
    const parentTree = commit.parent === undefined ? undefined : (await store.readCommit(commit.parent)).tree;
    for (const path of paths) {
      const now = await store.resolvePath(commit.tree, path);
      const before = parentTree === undefined ? undefined : await store.resolvePath(parentTree, path);
      if (now?.oid !== before?.oid) {
        changed.push(commit.oid);
        break;
      }
    }
  }
  return { commits: changed.slice(0, MAX_SUPERSEDED), more: Math.max(0, changed.length - MAX_SUPERSEDED) };
}

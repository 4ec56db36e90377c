/**
 * Which queued results are already on the results branch. A push whose response was lost (an
 * HTTP 500 or a reset after git-receive-pack ran) may have landed; so may the pushes of a
 * process that crashed before it could clear its spool. Their commits carry the trailer
 * Janus-Result with the record's id, so the writer looks for those ids on the branch before it
 * commits the records again.
 */
import type { ObjectStore } from '../git/object-store.ts';
import { parseTrailers, TRAILER_RESULT } from './commit-message.ts';
import type { ResultRecord } from './result-record.ts';

/** How far back to look when nothing says where the uncertain pushes started. */
const MAX_COMMITS = 10_000;

/**
 * Walks the branch from `tip`, first parent only, newest first, collecting the ids of `records`
 * found in Janus-Result trailers. It stops once every id is found, once it has passed every
 * commit of `since` (the tips the uncertain pushes were built on: nothing they added lies
 * below them; undefined when unknown, as after a restart), at the end of the history this cache
 * holds, or after MAX_COMMITS. That end can come early: a replica whose first fetch of the
 * branch was shallow, or whose push created it, holds the tip and its own commits, not the
 * other writers' commits between them. Result files do not depend on this walk
 * (commit-records.ts compares outcomes at the tip); a notice can then be written again.
 */
export async function landedResults(
  store: ObjectStore,
  tip: string | undefined,
  records: readonly ResultRecord[],
  since?: ReadonlySet<string>,
): Promise<Set<string>> {
  const wanted = new Set(records.flatMap((r) => (r.id === undefined ? [] : [r.id])));
  const found = new Set<string>();
  if (tip === undefined || wanted.size === 0) return found;
  const bases = new Set(since);
  let oid: string | undefined = tip;
  for (let walked = 0; oid !== undefined && walked < MAX_COMMITS && found.size < wanted.size; walked++) {
    if (since && bases.delete(oid) && bases.size === 0) break;
    const commit = await store.findCommit(oid);
    if (!commit) break;
    const id = parseTrailers(commit.message)[TRAILER_RESULT];
    if (id !== undefined && wanted.has(id)) found.add(id);
    oid = commit.parents[0];
  }
  return found;
}

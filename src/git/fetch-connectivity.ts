/**
 * What `git fetch` checks before it moves a ref (its "connectivity check"): the wanted commit is
 * here, and everything the fetched pack's trees and commits name is in the pack or was already
 * in the store. Without it, a server that sends a partial pack (or none) would have Janus move
 * its tracking ref onto objects it does not have: every later poll would find the ref current
 * and fail reading the same tree, until the branch moved, and then ask only for what is new.
 *
 * Objects already in the store are taken as complete: each came in a fetch checked the same way.
 */
import type { ObjectLinks } from './pack-links.ts';

/** Lookups between turns given back to the event loop (the controller shares the thread). */
const YIELD_EVERY = 10_000;

export interface FetchedObjects {
  /** The pack's objects (none when the server sent no pack). */
  oids: ReadonlySet<string>;
  links: ObjectLinks;
}

export interface ShallowUpdate {
  shallow: readonly string[];
  unshallow: readonly string[];
}

/** Whether the store held the object before this fetch. */
export type HasObject = (oid: string) => Promise<boolean>;

/**
 * The server's shallow-info, kept to what can be true: a commit made shallow must be here, and
 * one made whole again must have its parents here (git refuses both otherwise). Dropping the
 * rest keeps the shallow file from growing with names of nothing, and keeps Janus from taking
 * history as complete that never came.
 */
export async function acceptedShallow(
  update: ShallowUpdate,
  fetched: FetchedObjects,
  has: HasObject,
  parentsOf: (commit: string) => Promise<readonly string[] | undefined>,
): Promise<ShallowUpdate> {
  const present = async (oid: string) => fetched.oids.has(oid) || (await has(oid));
  const shallow: string[] = [];
  for (const oid of update.shallow) if (await present(oid)) shallow.push(oid);
  const unshallow: string[] = [];
  for (const oid of update.unshallow) {
    const parents = fetched.links.parents.get(oid) ?? (await parentsOf(oid));
    if (parents === undefined) continue;
    let all = true;
    for (const parent of parents) if (!(await present(parent))) all = false;
    if (all) unshallow.push(oid);
  }
  return { shallow, unshallow };
}

/**
 * The first object the fetch should have brought and did not, described; undefined when the
 * wanted commit and all the pack names are here. A commit of the pack may lack its parents only
 * when it is shallow (`shallowAfter`: the store's shallow commits once this fetch is recorded).
 */
export async function missingObject(
  want: string,
  fetched: FetchedObjects,
  shallowAfter: ReadonlySet<string>,
  has: HasObject,
): Promise<string | undefined> {
  const checked = new Map<string, boolean>();
  const present = async (oid: string) => {
    if (fetched.oids.has(oid)) return true;
    let found = checked.get(oid);
    if (found === undefined) {
      found = await has(oid);
      checked.set(oid, found);
    }
    return found;
  };
  if (!(await present(want))) return `the wanted commit ${want}`;
  let looked = 0;
  const turn = () =>
    ++looked % YIELD_EVERY === 0 ? new Promise((resolve) => setImmediate(resolve)) : undefined;
  for (const [oid, from] of fetched.links.named) {
    if (!(await present(oid))) return `object ${oid}, named by ${from}`;
    await turn();
  }
  for (const [commit, parents] of fetched.links.parents) {
    if (shallowAfter.has(commit)) continue;
    for (const parent of parents)
      if (!(await present(parent))) return `commit ${parent}, the parent of ${commit}`;
    await turn();
  }
  return undefined;
}

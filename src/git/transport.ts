/** How a repository's branches reach the local object store, and how commits get back. */
import type { ObjectStore } from './object-store.ts';
import type { PackObject } from './pack-writer.ts';

export interface Transport {
  /** Human-readable location (URL or path), without credentials. */
  readonly display: string;
  /** Brings `branch` up to date in `store`; returns its tip, or undefined when the branch does not exist. */
  fetch(store: ObjectStore, branch: string): Promise<string | undefined>;
  /** Fetches `commits` more ancestors of `branch` into a shallow store; false when there are none left. */
  deepen(store: ObjectStore, branch: string, commits: number): Promise<boolean>;
  /**
   * Moves `branch` to `oid`, whose objects are in `store`. Never forced: fails with a GitAccessError
   * of kind 'rejected' unless the branch still points at `expected` (undefined: does not exist
   * yet). `objects`: every object reachable from `oid` and not from `expected` (what a remote
   * is sent; a local repository has them in `store` already).
   */
  push(
    store: ObjectStore,
    branch: string,
    oid: string,
    expected: string | undefined,
    objects: readonly PackObject[],
  ): Promise<void>;
}

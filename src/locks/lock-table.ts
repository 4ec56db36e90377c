/**
 * Locks that block: a transaction's entries in the LockTable janus-locks of each namespace its
 * locks are in (src/api/v1alpha1/lock-table.ts), which the admission policy janus-locks reads to
 * refuse others' writes to the targets it holds.
 *
 * Each Transaction writes its entries by server-side apply, forced, under a field manager of its
 * own (`janus-lock:<uid>`): transactions never read-modify-write one another's entries, an apply
 * of the entries it holds now drops those it no longer holds, and an apply of none releases them
 * all. An entry taken over by another transaction (after its Lease expired) is that transaction's
 * from then on: the previous holder's release leaves it alone. Entries are atomic for
 * server-side apply, so no field of a previous holder outlives the new holder's release.
 */
import {
  LOCK_TABLE_API_VERSION,
  LOCK_TABLE_KIND,
  LOCK_TABLE_NAME,
  LOCK_TABLE_PLURAL,
  type LockEntry,
  type LockTable,
  type Transaction,
} from '../api/v1alpha1/index.ts';
import { type KubeClient, PatchType } from '../kube/client.ts';
import { isConflict, isForbidden, isNotFound, refusalOf } from '../kube/errors.ts';
import { serviceAccountUser } from '../saga/targets.ts';

/** What the entries say the holder does with its locks. */
export type HolderPhase = 'Committing' | 'Verifying' | 'RollingBack';

/** A target as the policy names it: `deployments.apps/web`, `configmaps/app-config`. */
export function lockTableKey(target: { group: string; resource: string; name: string }): string {
  return `${target.group ? `${target.resource}.${target.group}` : target.resource}/${target.name}`;
}

/** The field manager of one transaction's entries. */
export function lockTableManager(uid: string): string {
  return `janus-lock:${uid}`;
}

export function lockEntry(txn: Pick<Transaction, 'metadata' | 'spec'>, phase: HolderPhase): LockEntry {
  return {
    transaction: txn.metadata.name,
    namespace: txn.metadata.namespace ?? '',
    uid: txn.metadata.uid ?? '',
    user: serviceAccountUser(txn),
    phase,
  };
}

/**
 * - held: the API server refuses others' writes to these targets (once its cache has the table);
 * - full: the table has no room (its entry limit, or the object's size): wait, as for a lock;
 * - unavailable: the table cannot be written here (no LockTable CRD installed, no grant in this
 *   namespace): the locks stay advisory, the transaction goes on.
 */
export type TableResult =
  | { kind: 'held' }
  | { kind: 'full'; message: string }
  | { kind: 'unavailable'; message: string };

const tablePath = (namespace: string) =>
  `/apis/${LOCK_TABLE_API_VERSION}/namespaces/${namespace}/${LOCK_TABLE_PLURAL}/${LOCK_TABLE_NAME}`;

export class LockTables {
  readonly #client: KubeClient;

  constructor(client: KubeClient) {
    this.#client = client;
  }

  #apply(uid: string, namespace: string, locks: Record<string, LockEntry> | undefined) {
    const body: LockTable = {
      apiVersion: LOCK_TABLE_API_VERSION,
      kind: LOCK_TABLE_KIND,
      metadata: { name: LOCK_TABLE_NAME, namespace },
      ...(locks && { spec: { locks } }),
    };
    return this.#client.request<LockTable>({
      method: 'PATCH',
      path: tablePath(namespace),
      query: { fieldManager: lockTableManager(uid), force: true },
      body,
      contentType: PatchType.apply,
    });
  }

  /**
   * Makes `keys` the transaction's entries in one namespace's table, all saying `phase`: one
   * apply, which also drops the entries of this transaction no longer among `keys`.
   */
  async hold(
    txn: Pick<Transaction, 'metadata' | 'spec'>,
    namespace: string,
    keys: readonly string[],
    phase: HolderPhase,
  ): Promise<TableResult> {
    const entry = lockEntry(txn, phase);
    try {
      await this.#apply(
        txn.metadata.uid ?? '',
        namespace,
        Object.fromEntries(keys.map((key) => [key, entry])),
      );
      return { kind: 'held' };
    } catch (e) {
      if (isNotFound(e) || isForbidden(e)) {
        return {
          kind: 'unavailable',
          message: `LockTable ${namespace}/${LOCK_TABLE_NAME}: ${e.serverMessage}`,
        };
      }
      const refused = refusalOf(e);
      if (refused) {
        return {
          kind: 'full',
          message: `LockTable ${namespace}/${LOCK_TABLE_NAME} has no room for ${keys.length} more entries: ${refused.message}`,
        };
      }
      throw e;
    }
  }

  /**
   * Removes every entry the transaction still holds, in each namespace: one apply of none each.
   * A table left empty is deleted (on the condition that nobody wrote it since): where no table
   * is, the API server evaluates nothing for a write, and most of the time nothing is locked.
   * Returns the namespaces whose table this identity may not write (403): for the controller,
   * namespaces that never granted it one, so no entry of its is there.
   */
  async releaseAll(txn: Pick<Transaction, 'metadata'>, namespaces: Iterable<string>): Promise<string[]> {
    const forbidden: string[] = [];
    for (const namespace of new Set(namespaces)) {
      try {
        const left = await this.#apply(txn.metadata.uid ?? '', namespace, undefined);
        if (Object.keys(left.spec?.locks ?? {}).length === 0) await this.#deleteIfUnchanged(left);
      } catch (e) {
        // No LockTable CRD, or the namespace is gone: there is no entry to remove.
        if (isNotFound(e)) continue;
        if (!isForbidden(e)) throw e;
        forbidden.push(namespace);
      }
    }
    return forbidden;
  }

  /** Deletes an empty table, unless someone wrote it since it was read. */
  async #deleteIfUnchanged(table: LockTable): Promise<void> {
    try {
      await this.#client.request({
        method: 'DELETE',
        path: tablePath(table.metadata.namespace ?? ''),
        body: {
          apiVersion: 'v1',
          kind: 'DeleteOptions',
          preconditions: { uid: table.metadata.uid, resourceVersion: table.metadata.resourceVersion },
        },
      });
    } catch (e) {
      // Written since (409), gone (404), or not ours to delete (403): the table stays, empty.
      if (isConflict(e) || isNotFound(e) || isForbidden(e)) return;
      throw e;
    }
  }
}

/**
 * The inventory after a committed transaction when the render's own (changes-for-render's `next`)
 * is no longer in memory: this process did not create the transaction (a restart, a new leader).
 * It is read from the Transaction itself: the previous inventory without what the transaction
 * deleted or left behind (its ANNOTATION_SOURCE_LEFT), with every object it applied, its digest
 * taken of the content it applied. The identities are exact (what a later commit may prune); the
 * order of a new object is its place after the object applied before it, which is the render's
 * order but for objects the commit did not change. An object applied encrypted (sopsContent) is
 * not decrypted here: its entry gets a digest no render has, so the next commit applies it again
 * (a server-side apply that changes nothing). Pure.
 */
import type { InventoryEntry, Transaction } from '../api/v1alpha1/index.ts';
import type { KubeObject } from '../kube/resources.ts';
import { leftInCluster } from '../results/render-transaction.ts';
import { identityKey, inventoryEntry, type ObjectIdentity } from './inventory.ts';

export function inventoryFromTransaction(
  previous: readonly InventoryEntry[],
  txn: Pick<Transaction, 'metadata' | 'spec'>,
  digestKey: string | Uint8Array,
): InventoryEntry[] {
  const gone = new Set<string>();
  for (const change of txn.spec.changes) {
    if (change.type === 'Delete') gone.add(identityKey(change.target));
  }
  for (const left of leftInCluster(txn.metadata.annotations ?? {})) {
    if (left.apiVersion && left.kind && left.name) gone.add(identityKey(left as ObjectIdentity));
  }
  const next = previous.filter((e) => !gone.has(identityKey(e)));
  const at = new Map(next.map((e, i) => [identityKey(e), i]));
  let after = -1;
  for (const change of txn.spec.changes) {
    if (change.type !== 'Apply' || !(change.content || change.sopsContent)) continue;
    const entry = change.content
      ? inventoryEntry(change.content as unknown as KubeObject, digestKey)
      : sealedEntry(change.target);
    const key = identityKey(entry);
    const found = at.get(key);
    if (found !== undefined) {
      next[found] = entry;
      after = found;
      continue;
    }
    next.splice(after + 1, 0, entry);
    after++;
    at.clear();
    for (const [i, e] of next.entries()) at.set(identityKey(e), i);
  }
  return next;
}

/** No HMAC-SHA256 is all zeros in practice: a digest that never equals a render's. */
const UNKNOWN_DIGEST = '0'.repeat(64);

function sealedEntry(target: Transaction['spec']['changes'][number]['target']): InventoryEntry {
  return {
    apiVersion: target.apiVersion,
    kind: target.kind,
    ...(target.namespace && { namespace: target.namespace }),
    name: target.name,
    digest: UNKNOWN_DIGEST,
  };
}

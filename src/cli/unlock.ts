/**
 * The API side of `janus recover --unlock`: opens the objects a Transaction still holds in the
 * LockTables when no controller will ever release them (it was uninstalled, or stopped for good).
 * CEL has no clock, so an entry never expires by itself; its Lease does, which is how this knows
 * the holder is gone.
 */
import type { Transaction } from '../api/v1alpha1/index.ts';
import type { KubeClient } from '../kube/client.ts';
import { isNotFound } from '../kube/errors.ts';
import { holderIdentity, isFree, type LeaseSpec } from '../locks/lease-name.ts';
import { LockTables } from '../locks/lock-table.ts';

/** Where the transaction's locks are: its Leases (namespace/name), as its status records them. */
export function recordedLeases(txn: Transaction): string[] {
  return [...new Set((txn.status?.items ?? []).flatMap((i) => (i.lease ? [i.lease] : [])))];
}

/**
 * The transaction's Leases a live holder still renews (it names this transaction and has not
 * expired): "shop/janus-lock-…, renewed 2026-…".
 */
export async function liveLeases(client: KubeClient, txn: Transaction, now = Date.now()): Promise<string[]> {
  const live: string[] = [];
  for (const lease of recordedLeases(txn)) {
    const [namespace, name] = lease.split('/');
    try {
      const found = await client.request<{ spec?: LeaseSpec }>({
        method: 'GET',
        path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`,
      });
      if (found.spec?.holderIdentity === holderIdentity(txn) && !isFree(found.spec, now))
        live.push(`${lease}, renewed ${found.spec.renewTime ?? found.spec.acquireTime ?? '?'}`);
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  }
  return live;
}

/**
 * Removes every entry the transaction still holds in the LockTables of its locks' namespaces
 * (one apply of none each, as its field manager: entries another transaction took over stay).
 */
export async function unlock(
  client: KubeClient,
  txn: Transaction,
): Promise<{ opened: string[]; forbidden: string[] }> {
  const namespaces = [...new Set(recordedLeases(txn).map((l) => l.split('/')[0] ?? ''))].filter(Boolean);
  const forbidden = await new LockTables(client).releaseAll(txn, namespaces);
  return { opened: namespaces.filter((n) => !forbidden.includes(n)), forbidden };
}

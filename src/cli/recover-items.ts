/**
 * The API side of `janus recover`: reads each standing change's prior state (rollback store) and
 * current object, and how to restore it (src/changes/restore.ts makes the restore).
 */
import type { Transaction } from '../api/v1alpha1/index.ts';
import { type RestoreOperation, restoreOperation } from '../changes/restore.ts';
import type { KubeClient } from '../kube/client.ts';
import { isNotFound } from '../kube/errors.ts';
import type { KubeObject, ObjectRef, Objects } from '../kube/resources.ts';
import { expiresAt, holderTransaction, isFree, type LeaseSpec } from '../locks/lease-name.ts';
import type { StoreReader } from '../rollback-store/store.ts';
import { describeTarget, resolveTarget } from '../saga/targets.ts';
import { diffObjects } from '../yaml/manifest-diff.ts';
import type { StandingItem } from './recover-plan.ts';

export interface InspectedItem extends StandingItem {
  ref: ObjectRef;
  prior: KubeObject | undefined;
  current: KubeObject | undefined;
  /** From the current object to its prior state; '' when they already match. */
  diff: string;
  operation: RestoreOperation;
}

export async function inspectItem(
  item: StandingItem,
  txn: Transaction,
  asServiceAccount: Objects,
  store: StoreReader,
): Promise<InspectedItem> {
  const mapping = await asServiceAccount.discovery.mapping(item.target.apiVersion, item.target.kind);
  const resolved = resolveTarget(item.target, txn.metadata.namespace ?? 'default', mapping.namespaced);
  const ref: ObjectRef = { ...item.target, namespace: resolved.namespace };
  const [{ prior }, current] = await Promise.all([
    store.snapshot(item.index, { target: ref, digest: txn.status?.items?.[item.index]?.snapshotDigest }),
    asServiceAccount.find(ref),
  ]);
  const what = describeTarget(resolved);
  const diff = diffObjects(current, prior, {
    from: current
      ? `current ${what} (resourceVersion ${current.metadata.resourceVersion})`
      : `current ${what} (absent)`,
    to: prior
      ? `prior ${what} (rollback store ${txn.status?.rollbackRef ?? ''}, before change ${item.index})`
      : `prior ${what} (absent: it did not exist before change ${item.index})`,
  });
  return { ...item, ref, prior, current, diff, operation: restoreOperation(prior, current) };
}

/**
 * The transaction holding the target's lock Lease right now, if it is another one: restoring
 * under a transaction in flight would pull the ground from under it.
 */
export async function otherLockHolder(
  client: KubeClient,
  item: StandingItem,
  txn: Transaction,
): Promise<string | undefined> {
  if (!item.lease) return undefined;
  const [namespace, name] = item.lease.split('/');
  try {
    const lease = await client.request<{ spec?: LeaseSpec }>({
      method: 'GET',
      path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`,
    });
    if (isFree(lease.spec, Date.now()) || !lease.spec?.holderIdentity) return undefined;
    const holder = holderTransaction(lease.spec.holderIdentity);
    if (holder === `${txn.metadata.namespace}/${txn.metadata.name}`) return undefined;
    const until = expiresAt(lease.spec);
    return `${holder}${until ? ` (lock held until ${new Date(until).toISOString()} unless renewed)` : ''}`;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

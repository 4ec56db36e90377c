/**
 * Preparing → Committing: dry-run every change as the ServiceAccount (so no lock is taken on a
 * target it may not write), lock every target, read its prior state, and store the prior
 * states. Nothing is changed unless all of that succeeds; any refusal ends the transaction
 * Failed with its locks released.
 */
import { analysisRefusal } from '../../analysis/index.ts';
import type { ItemStatus, TransactionStatus } from '../../api/v1alpha1/index.ts';
import { dryRunVerdict, readPrior as readPriorState } from '../../changes/prepare-verdicts.ts';
import { isForbidden, type KubeApiError } from '../../kube/errors.ts';
import type { KubeObject } from '../../kube/resources.ts';
import { compactPrior, snapshotDigest } from '../../rollback-store/codec.ts';
import { StoreAwaitingGcError, StoreClashError } from '../../rollback-store/store.ts';
import { fieldManager, sourceManagerOf } from '../../saga/targets.ts';
import type { Item, SagaRun } from '../context.ts';
import { holdLocks, releaseLocks } from '../locking.ts';
import { notGranted, type Refusal } from '../service-accounts.ts';
import { sopsRefusal } from '../view-role.ts';
import { isPastDeadline, lockWait, type StageResult, waitInPhase } from './outcomes.ts';

/** A Transaction's analysis names an address or a template namespace the settings do not allow. */
export const ANALYSIS_NOT_ALLOWED = 'AnalysisNotAllowed';

/** A change's SOPS content would be in clear to more readers than its Secret (src/controller/view-role.ts). */
export const SOPS_NOT_ALLOWED = 'SopsNotAllowed';

/** Reads and dry runs are independent: a few at a time, for latency, without flooding the server. */
const PARALLEL_READS = 8;

export async function prepare(run: SagaRun): Promise<StageResult> {
  const { deps, txn } = run;
  if (isPastDeadline(run))
    return fail(run, { reason: 'Timeout', message: 'the deadline passed before every target was locked' });
  const namespace = txn.metadata.namespace ?? '';
  const refusal = await deps.serviceAccounts.refusal(namespace, txn.spec.serviceAccountName);
  if (refusal) return fail(run, refusal);
  // The platform team's analysis settings, before anything is locked or changed: a check that
  // could only be refused in the bake window would cost a commit and a rollback.
  const analysisRefused = analysisRefusal(txn.spec.health?.analysis ?? [], namespace, deps.analysis);
  if (analysisRefused) return fail(run, { reason: ANALYSIS_NOT_ALLOWED, message: analysisRefused });
  // Before anything is decrypted: a kind whose readers would see the decrypted content in clear.
  const sopsRefused = await sopsRefusal(
    run.items,
    deps.sopsKinds,
    deps.viewRole,
    async (apiVersion, kind) => (await deps.objects.discovery.mapping(apiVersion, kind)).resource,
  );
  if (sopsRefused) return fail(run, { reason: SOPS_NOT_ALLOWED, message: sopsRefused });

  // Authorization before locks: a transaction whose ServiceAccount may not make its changes
  // never holds (or squats) anyone's lock. A transaction waiting for a lock is not dry-run again.
  const uid = txn.metadata.uid ?? '';
  if (!deps.heldLocks.isAuthorized(uid)) {
    const dryRunRefusal = await forEachLimited(run.items, (item) => dryRunItem(run, item));
    if (dryRunRefusal) return fail(run, dryRunRefusal);
    deps.heldLocks.markAuthorized(uid);
  }

  const locked = await notGrantedAsRefusal(
    (e) => namespaceOf(e) ?? namespace,
    () => holdLocks(run, run.items),
  );
  if ('reason' in locked) return fail(run, locked);
  if (!locked.held) return lockWait(run, locked.message, locked.retryInMs);

  const priors = new Map<number, KubeObject | undefined>();
  const readRefusal = await forEachLimited(run.items, async (item) => {
    const read = await readPrior(run, item);
    if ('reason' in read) return read;
    priors.set(item.index, read.prior);
    deps.metrics.itemOperation('prepare', 'success');
    return undefined;
  });
  if (readRefusal) return fail(run, readRefusal);

  const snapshots = run.items.map((item) => {
    const prior = priors.get(item.index);
    return { index: item.index, prior: prior && compactPrior(prior, sourceManagerOf(txn)) };
  });
  let rollbackRef: string;
  try {
    rollbackRef = await deps.store.write(txn, snapshots);
  } catch (e) {
    if (e instanceof StoreClashError) return fail(run, { reason: 'RollbackStoreClash', message: e.message });
    if (e instanceof StoreAwaitingGcError)
      return waitInPhase(run, 'StoreAwaitingGarbageCollection', e.message, 1_000);
    if (isForbidden(e)) return fail(run, notGranted(namespace, e));
    throw e;
  }
  const items: ItemStatus[] = run.items.map((item, i) => ({
    ...run.status.items?.[i],
    prepared: true,
    resourceVersion: priors.get(item.index)?.metadata.resourceVersion ?? '',
    snapshotDigest: snapshotDigest(snapshots[i]?.prior),
  }));
  const status: TransactionStatus = { ...run.status, items, rollbackRef, fieldManager: fieldManager(txn) };
  return {
    txn: await run.writeStatus(status, {
      to: 'Committing',
      detail: {
        reason: 'Committing',
        message: `${run.items.length} targets dry-run, locked and snapshotted; committing`,
      },
    }),
  };
}

/** Dry-runs one change against the target's current state (src/changes/prepare-verdicts.ts). */
async function dryRunItem(run: SagaRun, item: Item): Promise<Refusal | undefined> {
  const verdict = await dryRunVerdict(run.changeContext(), item);
  if (!('reason' in verdict)) run.deps.metrics.itemOperation('dryrun', 'success');
  else if (verdict.reason === 'DryRunFailed') run.deps.metrics.itemOperation('dryrun', 'error');
  return 'reason' in verdict ? verdict : undefined;
}

/** Runs `fn`; a 403 to the controller's own request becomes a NamespaceNotGranted refusal. */
async function notGrantedAsRefusal<T>(
  namespace: (e: KubeApiError) => string,
  fn: () => Promise<T>,
): Promise<T | Refusal> {
  try {
    return await fn();
  } catch (e) {
    if (!isForbidden(e)) throw e;
    return notGranted(namespace(e), e);
  }
}

/** The namespace of a request path /api(s)/…/namespaces/<ns>/…, if it has one. */
function namespaceOf(e: KubeApiError): string | undefined {
  return /\/namespaces\/([^/?]+)/.exec(e.path)?.[1];
}

/** Reads a target's prior state; a Create's target must not exist, an Update's or Patch's must. */
async function readPrior(run: SagaRun, item: Item): Promise<{ prior: KubeObject | undefined } | Refusal> {
  const read = await readPriorState(run.changeContext(), item);
  if ('reason' in read && read.reason === 'ReadFailed') run.deps.metrics.itemOperation('prepare', 'error');
  return read;
}

async function fail(run: SagaRun, refusal: Refusal): Promise<StageResult> {
  await releaseLocks(run);
  return { txn: await run.writeStatus(run.status, { to: 'Failed', detail: refusal }) };
}

/** Runs `fn` over items with bounded parallelism; the first refusal (by item order) wins. */
async function forEachLimited<T>(
  items: readonly Item[],
  fn: (item: Item) => Promise<T | undefined>,
): Promise<T | undefined> {
  const results: (T | undefined)[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as Item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_READS, items.length) }, worker));
  return results.find((r) => r !== undefined);
}

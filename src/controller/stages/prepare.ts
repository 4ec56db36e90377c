/**
 * Preparing → Committing: lock every target, read its prior state as the ServiceAccount, dry-run
 * every change against that state, and store the prior states. Nothing is changed unless all of
 * that succeeds; any refusal ends the transaction Failed with its locks released.
 */
import type { ItemStatus, TransactionStatus } from '../../api/v1alpha1/index.ts';
import { isNotFound, isTransient } from '../../kube/errors.ts';
import type { KubeObject } from '../../kube/resources.ts';
import { compactPrior } from '../../rollback-store/codec.ts';
import { describeTarget } from '../../saga/targets.ts';
import { describeFailure, dryRun, refOf } from '../changes.ts';
import type { Item, SagaRun } from '../context.ts';
import { holdLocks, releaseLocks } from '../locking.ts';
import { lockWait, type StageResult } from './lifecycle.ts';

/** Reads and dry runs are independent: a few at a time, for latency, without flooding the server. */
const PARALLEL_READS = 8;

type Refusal = { reason: string; message: string };

export async function prepare(run: SagaRun): Promise<StageResult> {
  const { deps, txn } = run;
  if (isPastDeadline(run))
    return fail(run, { reason: 'Timeout', message: 'the deadline passed before every target was locked' });
  const sa = txn.spec.serviceAccountName;
  if (!(await deps.serviceAccounts.exists(txn.metadata.namespace ?? '', sa))) {
    return fail(run, {
      reason: 'ServiceAccountNotFound',
      message: `ServiceAccount "${sa}" not found in namespace "${txn.metadata.namespace}"`,
    });
  }

  const locked = await holdLocks(run, run.items);
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

  const dryRunRefusal = await forEachLimited(run.items, async (item) => {
    try {
      await dryRun(run, item, priors.get(item.index));
      deps.metrics.itemOperation('dryrun', 'success');
      return undefined;
    } catch (e) {
      if (isTransient(e)) throw e;
      deps.metrics.itemOperation('dryrun', 'error');
      return { reason: 'DryRunFailed', message: describeFailure(item, 'dry run', e) };
    }
  });
  if (dryRunRefusal) return fail(run, dryRunRefusal);

  const rollbackRef = await deps.store.write(
    txn,
    run.items.map((item) => {
      const prior = priors.get(item.index);
      return { index: item.index, prior: prior && compactPrior(prior) };
    }),
  );
  const items: ItemStatus[] = run.items.map((item, i) => ({
    ...run.status.items?.[i],
    prepared: true,
    resourceVersion: priors.get(item.index)?.metadata.resourceVersion ?? '',
  }));
  const status: TransactionStatus = { ...run.status, items, rollbackRef };
  return {
    txn: await run.writeStatus(status, {
      to: 'Committing',
      detail: {
        reason: 'Committing',
        message: `${run.items.length} targets locked, snapshotted and dry-run; committing`,
      },
    }),
  };
}

/** Reads a target's prior state; a Create's target must not exist, the others' must. */
async function readPrior(run: SagaRun, item: Item): Promise<{ prior: KubeObject | undefined } | Refusal> {
  try {
    const prior = await run.asServiceAccount().get(refOf(item));
    if (item.change.type === 'Create') {
      return {
        reason: 'TargetExists',
        message: `change ${item.index}: cannot create ${describeTarget(item.target)}: it already exists`,
      };
    }
    return { prior };
  } catch (e) {
    if (isNotFound(e)) {
      if (item.change.type === 'Create' || item.change.type === 'Delete') return { prior: undefined };
      return {
        reason: 'TargetNotFound',
        message: `change ${item.index}: cannot ${item.change.type.toLowerCase()} ${describeTarget(item.target)}: it does not exist`,
      };
    }
    if (isTransient(e)) throw e;
    run.deps.metrics.itemOperation('prepare', 'error');
    return { reason: 'ReadFailed', message: describeFailure(item, 'read', e) };
  }
}

export function isPastDeadline(run: SagaRun): boolean {
  const deadline = run.status.deadline;
  return deadline !== undefined && run.deps.now() > Date.parse(deadline);
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

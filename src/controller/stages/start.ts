/** Pending → Preparing: checks what the CRD cannot, then starts the clock. */

import {
  ANNOTATION_SOURCE_PATH,
  ANNOTATION_SOURCE_REPOSITORY,
  ANNOTATION_SOURCE_REVISION,
  type TransactionStatus,
} from '../../api/v1alpha1/index.ts';
import { describeTarget, duplicateTargets, statusTarget } from '../../saga/targets.ts';
import type { SagaRun } from '../context.ts';
import { freshDeadline, type StageResult } from './outcomes.ts';

export async function start(run: SagaRun): Promise<StageResult> {
  const now = run.deps.now();
  const { txn } = run;
  const base: TransactionStatus = {
    startedAt: new Date(now).toISOString(),
    items: run.items.map((i) => ({
      target: statusTarget(i.target),
      type: i.change.type,
      prepared: false,
      committed: false,
      rolledBack: false,
      lease: `${i.lock.namespace}/${i.lock.name}`,
    })),
  };
  const annotations = txn.metadata.annotations ?? {};
  const repository = annotations[ANNOTATION_SOURCE_REPOSITORY];
  if (repository) {
    base.source = {
      repository,
      revision: annotations[ANNOTATION_SOURCE_REVISION] ?? '',
      path: annotations[ANNOTATION_SOURCE_PATH] ?? '',
    };
  }
  const invalid =
    run.unresolved ??
    duplicateTargets(run.items.map((i) => i.target)) ??
    run.items
      .filter((i) => i.change.target.namespace && i.target.namespace === undefined)
      .map(
        (i) => `change ${i.index}: ${describeTarget(i.target)} is cluster-scoped; remove target.namespace`,
      )[0];
  if (invalid) {
    return {
      txn: await run.writeStatus(base, { to: 'Failed', detail: { reason: 'InvalidSpec', message: invalid } }),
    };
  }
  const refusal = await run.deps.serviceAccounts.refusal(
    txn.metadata.namespace ?? '',
    txn.spec.serviceAccountName,
  );
  if (refusal) return { txn: await run.writeStatus(base, { to: 'Failed', detail: refusal }) };
  run.deps.metrics.itemCount(run.items.length);
  return {
    txn: await run.writeStatus(
      { ...base, deadline: freshDeadline(run, now) },
      {
        to: 'Preparing',
        detail: { reason: 'Preparing', message: `locking and snapshotting ${run.items.length} targets` },
      },
    ),
  };
}

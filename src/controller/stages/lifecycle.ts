/** Stages around the saga proper: finalizer, cleanup, one-shot annotations, entering rollback. */

import { FINALIZER, isTerminal, type Transaction } from '../../api/v1alpha1/index.ts';
import { isInvalid } from '../../kube/errors.ts';
import type { RollbackCause } from '../../saga/decide.ts';
import { pendingCheck } from '../../saga/health-gate.ts';
import type { SagaRun } from '../context.ts';
import { releaseLocks } from '../locking.ts';
import { freshDeadline, type StageResult } from './outcomes.ts';

const annotationPath = (name: string) =>
  `/metadata/annotations/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;

export async function addFinalizer(run: SagaRun): Promise<StageResult> {
  const ops = run.txn.metadata.finalizers
    ? [{ op: 'add', path: '/metadata/finalizers/-', value: FINALIZER }]
    : [{ op: 'add', path: '/metadata/finalizers', value: [FINALIZER] }];
  return { txn: await run.patchMetadata(ops) };
}

async function removeFinalizer(run: SagaRun): Promise<Transaction> {
  const index = run.txn.metadata.finalizers?.indexOf(FINALIZER) ?? -1;
  if (index < 0) return run.txn;
  // The test makes the removal exact even if another finalizer was added meanwhile.
  return run.patchMetadata([
    { op: 'test', path: `/metadata/finalizers/${index}`, value: FINALIZER },
    { op: 'remove', path: `/metadata/finalizers/${index}` },
  ]);
}

/** Terminal: every lock is released and the finalizer goes, so deleting the object is instant. */
export async function cleanup(run: SagaRun): Promise<StageResult> {
  run.deps.health.release(run.name);
  await releaseLocks(run);
  return { txn: await removeFinalizer(run) };
}

/** Deleted while in flight: release the locks and let it go. No rollback (SPEC §3). */
export async function finalize(run: SagaRun): Promise<StageResult> {
  run.deps.health.release(run.name);
  await releaseLocks(run);
  if (run.txn.status?.phase && !isTerminal(run.txn.status.phase)) {
    await run.event(
      'Warning',
      'DeletedInFlight',
      `deleted while ${run.txn.status.phase}: locks released, nothing rolled back`,
    );
  }
  return { txn: await removeFinalizer(run) };
}

async function removeAnnotation(run: SagaRun, annotation: string): Promise<Transaction> {
  try {
    return await run.patchMetadata([{ op: 'remove', path: annotationPath(annotation) }]);
  } catch (e) {
    if (isInvalid(e)) return run.txn; // already gone
    throw e;
  }
}

export async function dropAnnotation(run: SagaRun, annotation: string, why: string): Promise<StageResult> {
  await run.event('Warning', 'AnnotationIgnored', `${annotation} removed: ${why}`);
  return { txn: await removeAnnotation(run, annotation) };
}

const CAUSE_MESSAGES: Record<RollbackCause, string> = {
  RollbackRequested: 'rollback requested with the tx.janus.io/request-rollback annotation',
  RollbackRetried: 'rollback retried with the tx.janus.io/retry-rollback annotation',
  Recovery: 'retrying the rollback that failed',
  Cancelled: 'cancelled with the tx.janus.io/cancel annotation',
};

/**
 * Committed or Failed (or, cancelled, any phase in flight) → RollingBack with a fresh deadline: a
 * transaction committed long ago can still be rolled back. The status is written before the annotation is removed, so a crash in
 * between cannot lose the request.
 */
export async function beginRollback(
  run: SagaRun,
  cause: RollbackCause,
  consume?: string,
): Promise<StageResult> {
  const now = run.deps.now();
  const status = run.status;
  const attempts = cause === 'Recovery' ? (status.recoveryAttempts ?? 0) + 1 : 0;
  const items = (status.items ?? []).map((item) =>
    cause === 'RollbackRetried' && item.committed && !item.rolledBack
      ? { ...item, conflict: false, error: '' } // a human asked: conflicts are tried again
      : item,
  );
  const { nextRecoveryAt: _next, completedAt: _completed, ...rest } = status;
  // A cancel in the middle of a health check ends the check: nothing concluded it.
  if (pendingCheck(status)) {
    delete rest.health;
    run.deps.health.release(run.name);
  }
  // The annotation's value is the reason (a ROLLBACK file's text, `janus rollback --reason`).
  const reason = consume ? run.txn.metadata.annotations?.[consume]?.trim() : undefined;
  const message = reason && reason !== 'true' ? `${CAUSE_MESSAGES[cause]}: ${reason}` : CAUSE_MESSAGES[cause];
  await run.writeStatus(
    {
      ...rest,
      items,
      recoveryAttempts: attempts,
      deadline: freshDeadline(run, now),
    },
    { to: 'RollingBack', detail: { reason: cause, message } },
  );
  return { txn: consume ? await removeAnnotation(run, consume) : run.txn };
}

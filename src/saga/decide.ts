/**
 * What to do next with a Transaction, decided from its persisted state and the clock alone.
 * Pure: every side effect is carried out by the controller's stages (src/controller/stages).
 */
import {
  ANNOTATION_CANCEL,
  ANNOTATION_REQUEST_ROLLBACK,
  ANNOTATION_RETRY_ROLLBACK,
  FINALIZER,
  type Phase,
  type Transaction,
} from '../api/v1alpha1/index.ts';
import { pendingCheck } from './health-gate.ts';
import { isTerminal } from './status.ts';

/** Automatic rollback attempts from Failed before a human must step in (janus recover). */
export const MAX_RECOVERY_ATTEMPTS = 5;
/** First automatic retry after a rollback failed; doubles with each attempt. */
export const RECOVERY_BASE_DELAY_MS = 10_000;

export type RollbackCause =
  | 'RollbackRequested' // tx.janus.io/request-rollback on a Committed transaction
  | 'RollbackRetried' // tx.janus.io/retry-rollback on a Failed transaction
  | 'Recovery' // automatic, bounded retry of a rollback that failed
  | 'Cancelled'; // tx.janus.io/cancel on a transaction in flight

export type Step =
  /** Deleted: release the locks and let the deletion finish; never roll back. */
  | { do: 'finalize' }
  | { do: 'addFinalizer' }
  /** Pending → Preparing. */
  | { do: 'start' }
  /** Lock, read, snapshot and dry-run every change, then → Committing (or Failed). */
  | { do: 'prepare' }
  /** Apply the remaining changes, then → Committed (or RollingBack, or Failed). */
  | { do: 'commit' }
  /** Undo the committed changes in reverse order, then → RolledBack (or Failed), or check their health. */
  | { do: 'rollback' }
  /** The health gate: wait for the targets to be healthy, then → Committed / RolledBack, or roll back / fail. */
  | { do: 'verify' }
  /** Committed or Failed → RollingBack, with a fresh deadline. */
  | { do: 'beginRollback'; cause: RollbackCause; consumeAnnotation?: string }
  /** A one-shot annotation that does not apply in this phase: remove it and say why. */
  | { do: 'dropAnnotation'; annotation: string; why: string }
  /** Terminal: release any lock still held and remove the finalizer. */
  | { do: 'cleanup' }
  | { do: 'wait'; untilMs: number }
  | { do: 'nothing' };

export function phaseOf(txn: Transaction): Phase {
  return txn.status?.phase ?? 'Pending';
}

/** Committed changes whose rollback has not happened (conflicts included). */
export function unrolledCommits(txn: Transaction): number {
  return (txn.status?.items ?? []).filter((i) => i.committed && !i.rolledBack).length;
}

/** Unrolled changes that failed for a reason a retry can fix (conflicts need a human). */
function retryableUnrolled(txn: Transaction): number {
  return (txn.status?.items ?? []).filter((i) => i.committed && !i.rolledBack && !i.conflict).length;
}

export function recoveryDelayMs(attempts: number): number {
  return RECOVERY_BASE_DELAY_MS * 2 ** Math.max(0, attempts);
}

export function decide(txn: Transaction, nowMs: number): Step {
  const hasFinalizer = txn.metadata.finalizers?.includes(FINALIZER) ?? false;
  if (txn.metadata.deletionTimestamp) return hasFinalizer ? { do: 'finalize' } : { do: 'nothing' };
  const phase = phaseOf(txn);
  if (isTerminal(phase)) return decideTerminal(txn, phase, hasFinalizer, nowMs);
  if (!hasFinalizer) return { do: 'addFinalizer' };
  if (ANNOTATION_CANCEL in (txn.metadata.annotations ?? {})) return decideCancel(phase);
  switch (phase) {
    case 'Pending':
      return { do: 'start' };
    case 'Preparing':
      return { do: 'prepare' };
    case 'Prepared':
    case 'Committing':
      return { do: 'commit' };
    case 'Verifying':
      return { do: 'verify' };
    case 'RollingBack':
      return pendingCheck(txn.status) === 'Rollback' ? { do: 'verify' } : { do: 'rollback' };
  }
  return { do: 'nothing' };
}

/**
 * A cancel in flight: whatever was committed so far is rolled back (nothing, before the commit),
 * so the cluster ends as it was. A rollback already under way just goes on.
 */
function decideCancel(phase: Phase): Step {
  if (phase === 'RollingBack') {
    return {
      do: 'dropAnnotation',
      annotation: ANNOTATION_CANCEL,
      why: 'the transaction is already rolling back',
    };
  }
  return { do: 'beginRollback', cause: 'Cancelled', consumeAnnotation: ANNOTATION_CANCEL };
}

/** Committed, RolledBack or Failed: one-shot annotations, bounded recovery, then cleanup. */
function decideTerminal(txn: Transaction, phase: Phase, hasFinalizer: boolean, nowMs: number): Step {
  const annotations = txn.metadata.annotations ?? {};
  if (ANNOTATION_CANCEL in annotations) {
    return {
      do: 'dropAnnotation',
      annotation: ANNOTATION_CANCEL,
      why: `cancel applies to transactions in flight; this one is already ${phase}${phase === 'Committed' ? ' (janus rollback undoes it)' : ''}`,
    };
  }
  if (ANNOTATION_REQUEST_ROLLBACK in annotations) {
    return phase === 'Committed'
      ? { do: 'beginRollback', cause: 'RollbackRequested', consumeAnnotation: ANNOTATION_REQUEST_ROLLBACK }
      : {
          do: 'dropAnnotation',
          annotation: ANNOTATION_REQUEST_ROLLBACK,
          why: `request-rollback applies to Committed transactions; this one is ${phase}`,
        };
  }
  if (ANNOTATION_RETRY_ROLLBACK in annotations) {
    // Any committed change counts: after `janus recover` restored the last conflicts by hand,
    // a retry finds nothing left to undo and ends RolledBack.
    if (phase === 'Failed' && (txn.status?.items ?? []).some((i) => i.committed)) {
      return { do: 'beginRollback', cause: 'RollbackRetried', consumeAnnotation: ANNOTATION_RETRY_ROLLBACK };
    }
    return {
      do: 'dropAnnotation',
      annotation: ANNOTATION_RETRY_ROLLBACK,
      why:
        phase === 'Failed'
          ? 'retry-rollback: nothing was committed, so nothing is left to roll back'
          : `retry-rollback applies to Failed transactions; this one is ${phase}`,
    };
  }
  if (
    phase === 'Failed' &&
    retryableUnrolled(txn) > 0 &&
    (txn.status?.recoveryAttempts ?? 0) < MAX_RECOVERY_ATTEMPTS
  ) {
    const at = txn.status?.nextRecoveryAt ? Date.parse(txn.status.nextRecoveryAt) : 0;
    if (nowMs >= at) return { do: 'beginRollback', cause: 'Recovery' };
    if (!hasFinalizer) return { do: 'wait', untilMs: at };
  }
  return hasFinalizer ? { do: 'cleanup' } : { do: 'nothing' };
}

/** When the controller must look at a Transaction again even if nothing changes: its deadline. */
export function wakeUpAt(txn: Transaction): number | undefined {
  if (isTerminal(phaseOf(txn))) {
    const at = txn.status?.nextRecoveryAt;
    return at && retryableUnrolled(txn) > 0 ? Date.parse(at) : undefined;
  }
  return txn.status?.deadline ? Date.parse(txn.status.deadline) : undefined;
}

/**
 * What to do next with a Transaction, decided from its persisted state and the clock alone.
 * Pure: every side effect is carried out by the controller's stages (src/controller/stages).
 */
import { acceptance, phaseOf, REQUEST_ANNOTATIONS, type RequestKind, requestsOn } from '../api/requests.ts';
import { FINALIZER, isTerminal, type Phase, type Transaction } from '../api/v1alpha1/index.ts';
import { pendingCheck } from './health-gate.ts';

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
  const terminal = isTerminal(phase);
  if (!terminal && !hasFinalizer) return { do: 'addFinalizer' };
  const request = decideRequests(txn);
  if (request) return request;
  if (terminal) return decideTerminal(txn, phase, hasFinalizer, nowMs);
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

const CAUSES: Record<RequestKind, RollbackCause> = {
  cancel: 'Cancelled',
  rollback: 'RollbackRequested',
  'retry-rollback': 'RollbackRetried',
};

/**
 * The one-shot annotations set, as the requests table judges them in this phase: the first one
 * that applies begins the rollback; one that does not is removed, saying why; one that must
 * wait stays until the phase changes.
 */
function decideRequests(txn: Transaction): Step | undefined {
  for (const request of requestsOn(txn)) {
    const annotation = REQUEST_ANNOTATIONS[request];
    const { verdict, message } = acceptance(request, txn);
    if (verdict === 'accept')
      return { do: 'beginRollback', cause: CAUSES[request], consumeAnnotation: annotation };
    if (verdict !== 'wait') return { do: 'dropAnnotation', annotation, why: message };
  }
  return undefined;
}

/** Committed, RolledBack or Failed, with no request: bounded recovery, then cleanup. */
function decideTerminal(txn: Transaction, phase: Phase, hasFinalizer: boolean, nowMs: number): Step {
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

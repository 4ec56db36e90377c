/**
 * How a stage ends, shared by the stages so none imports another: abort (to RollingBack or
 * Failed), entering the health check, waiting in the phase, the deadline and the next recovery.
 */

import { parseDuration } from '../../api/duration.ts';
import {
  DEFAULT_TIMEOUT,
  type ItemStatus,
  type Transaction,
  type TransactionStatus,
} from '../../api/v1alpha1/index.ts';
import { recoveryDelayMs } from '../../saga/decide.ts';
import { fitDetail } from '../../saga/fit-status.ts';
import type { ConditionSpec, PhaseDetail } from '../../saga/status.ts';
import type { SagaRun } from '../context.ts';

/** What the reconciler continues from: the Transaction as written, or when to look again. */
export type StageResult = { txn: Transaction } | { requeueAfterMs: number };

/**
 * How a stage that just made (or undid) the changes enters the health check: `status` holds the
 * new check, and the phase it shows if the check must wait (Verifying, or RollingBack with the
 * check pending). Nothing is written yet: the verify stage looks first, so targets healthy at
 * once cost no extra status write.
 */
export interface Entering {
  status: TransactionStatus;
  to: 'Verifying' | 'RollingBack';
  detail: PhaseDetail;
}

/** A stage's end: a StageResult, or the health check to enter at once (the reconciler runs it). */
export type StageOutcome = StageResult | { enterCheck: Entering };

export function enterCheck(entering: Entering): StageOutcome {
  return { enterCheck: entering };
}

export function isPastDeadline(run: SagaRun): boolean {
  const deadline = run.status.deadline;
  return deadline !== undefined && run.deps.now() > Date.parse(deadline);
}

/** spec.timeout from now: the deadline of a transaction that starts, and of a rollback that starts. */
export function freshDeadline(run: SagaRun, now = run.deps.now()): string {
  return new Date(now + parseDuration(run.txn.spec.timeout ?? DEFAULT_TIMEOUT)).toISOString();
}

/**
 * Nothing committed: Failed at once. Otherwise RollingBack, with a fresh deadline of its own:
 * a transaction that ran out of time must still get the time to undo what it did. `status` is
 * the status to write (its items say what was committed).
 */
export async function abort(
  run: SagaRun,
  status: TransactionStatus & { items: ItemStatus[] },
  why: PhaseDetail,
  conditions: readonly ConditionSpec[] = [],
): Promise<StageResult> {
  const committed = status.items.filter((i) => i.committed).length;
  if (committed === 0) {
    return { txn: await run.writeStatus(status, { to: 'Failed', detail: why }) };
  }
  return {
    txn: await run.writeStatus(
      { ...status, deadline: freshDeadline(run) },
      {
        to: 'RollingBack',
        detail: {
          reason: why.reason,
          message: `${why.message}; rolling back ${committed} committed change(s)`,
        },
        conditions,
      },
    ),
  };
}

/** "3/3 changes committed: Patch ConfigMap app-config, …". */
export function committedMessage(run: SagaRun): string {
  const total = run.items.length;
  const shown = run.items.slice(0, 10).map((i) => `${i.change.type} ${i.target.kind} ${i.target.name}`);
  const summary = shown.join(', ') + (total > 10 ? `, and ${total - 10} more` : '');
  return `${total}/${total} changes committed: ${summary}`;
}

/** When the next automatic recovery attempt may run after a rollback that failed. */
export function nextRecovery(run: SagaRun): string {
  return new Date(run.deps.now() + recoveryDelayMs(run.status.recoveryAttempts ?? 0)).toISOString();
}

/** Records why the transaction waits for a lock (once per new reason) and looks again soon. */
export function lockWait(run: SagaRun, message: string, retryInMs: number): Promise<StageResult> {
  return waitInPhase(run, 'LockWait', message, retryInMs);
}

/**
 * Stays in the phase, saying why in Reconciling (and an Event, once per new reason or message),
 * and looks again after `retryInMs`, or at the deadline if that comes first.
 */
export async function waitInPhase(
  run: SagaRun,
  reason: string,
  message: string,
  retryInMs: number,
): Promise<StageResult> {
  const reconciling = run.status.conditions?.find((c) => c.type === 'Reconciling');
  // Compared as it will be stored: a message fitted to the schema must not look new every time.
  const stored = fitDetail({ reason, message });
  if (reconciling?.reason !== stored.reason || reconciling.message !== stored.message) {
    await run.writeStatus(run.status, { to: run.phase, detail: { reason, message } });
    await run.event('Normal', reason, message);
  }
  const deadline = Date.parse(run.status.deadline ?? '');
  const untilDeadline = Number.isNaN(deadline) ? retryInMs : Math.max(0, deadline - run.deps.now()) + 10;
  return { requeueAfterMs: Math.min(retryInMs, untilDeadline) };
}

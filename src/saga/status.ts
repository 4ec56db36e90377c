/**
 * The saga's phases and the status they show: which transitions are legal, and the kstatus
 * conditions (Ready, Reconciling, Stalled) plus Prepared/Committed/RolledBack for each phase, so
 * `kubectl wait`, Flux and Argo CD health checks read a Transaction correctly.
 */
import { type Condition, isTerminal, type Phase, type TransactionStatus } from '../api/v1alpha1/index.ts';

/** Every legal edge of the state machine (SPEC §3). */
export const TRANSITIONS: Readonly<Record<Phase, readonly Phase[]>> = {
  // → RollingBack before the commit: a cancel, which then finds nothing to undo.
  Pending: ['Preparing', 'Failed', 'RollingBack'],
  Preparing: ['Prepared', 'Failed', 'RollingBack'],
  Prepared: ['Committing', 'Failed', 'RollingBack'],
  Committing: ['Verifying', 'Committed', 'RollingBack', 'Failed'],
  Verifying: ['Committed', 'RollingBack'],
  Committed: ['RollingBack'],
  RollingBack: ['RolledBack', 'Failed'],
  RolledBack: [],
  Failed: ['RollingBack'],
};

export class IllegalTransitionError extends Error {
  override readonly name = 'IllegalTransitionError';
}

/** The path of logical transitions from one phase to another, e.g. Preparing → Prepared → Committing. */
export function transitionPath(from: Phase, to: Phase): Phase[] {
  if (from === to) return [];
  if (TRANSITIONS[from].includes(to)) return [to];
  for (const via of TRANSITIONS[from]) {
    if (TRANSITIONS[via].includes(to)) return [via, to];
  }
  throw new IllegalTransitionError(`a Transaction cannot go from ${from} to ${to}`);
}

export interface PhaseDetail {
  /** CamelCase reason for the phase's main condition, e.g. "LockWait", "RollbackConflict". */
  reason: string;
  message: string;
}

export type ConditionSpec = Pick<Condition, 'type' | 'status' | 'reason' | 'message'>;

/** The conditions a Transaction shows in `phase`, given why it is there. */
export function conditionsFor(phase: Phase, detail: PhaseDetail): ConditionSpec[] {
  const c = (type: string, status: Condition['status'], reason: string, message: string): ConditionSpec => ({
    type,
    status,
    reason,
    message,
  });
  const inFlight = !isTerminal(phase);
  const out: ConditionSpec[] = [
    c('Ready', phase === 'Committed' ? 'True' : 'False', detail.reason, detail.message),
    inFlight
      ? c('Reconciling', 'True', detail.reason, detail.message)
      : c('Reconciling', 'False', phase, `the transaction is ${phase}`),
    // kstatus reads Stalled=True as Failed and anything else settled as Current: a RolledBack
    // transaction will never become Ready either, so Flux health checks must not count it healthy.
    phase === 'Failed' || phase === 'RolledBack'
      ? c('Stalled', 'True', detail.reason, detail.message)
      : c('Stalled', 'False', phase, 'the transaction is not stalled'),
  ];
  switch (phase) {
    case 'Pending':
    case 'Preparing':
      out.push(c('Prepared', 'False', detail.reason, detail.message));
      break;
    case 'Prepared':
    case 'Committing':
      out.push(
        c(
          'Prepared',
          'True',
          'TargetsLockedAndSnapshotted',
          'every target is locked, snapshotted and dry-run',
        ),
      );
      out.push(c('Committed', 'False', detail.reason, detail.message));
      break;
    case 'Verifying':
      // Committed is the phase after the gate: until the targets are healthy it is not reached.
      out.push(c('Committed', 'False', detail.reason, detail.message));
      break;
    case 'Committed':
      out.push(c('Committed', 'True', detail.reason, detail.message));
      break;
    case 'RollingBack':
      out.push(c('Committed', 'False', detail.reason, detail.message));
      out.push(c('RolledBack', 'False', detail.reason, detail.message));
      break;
    case 'RolledBack':
      out.push(c('Committed', 'False', detail.reason, detail.message));
      out.push(c('RolledBack', 'True', detail.reason, detail.message));
      break;
    case 'Failed':
      break;
  }
  return out;
}

/**
 * Merges conditions into a status: a condition whose status did not change keeps its
 * lastTransitionTime, as metav1.SetStatusCondition does.
 */
export function mergeConditions(
  existing: readonly Condition[] | undefined,
  updates: readonly ConditionSpec[],
  now: string,
  observedGeneration: number | undefined,
): Condition[] {
  const byType = new Map((existing ?? []).map((c) => [c.type, c]));
  for (const u of updates) {
    const previous = byType.get(u.type);
    const lastTransitionTime = previous && previous.status === u.status ? previous.lastTransitionTime : now;
    byType.set(u.type, {
      ...u,
      lastTransitionTime,
      ...(observedGeneration !== undefined && { observedGeneration }),
    });
  }
  return [...byType.values()];
}

/**
 * The condition that says most about a transaction: why it failed, else how it ended, else what
 * it is doing. Its message is the results record's, the commit status's and the notification's.
 */
export function summaryCondition(conditions: readonly Condition[]): Condition | undefined {
  for (const type of ['Stalled', 'RolledBack', 'Ready', 'Reconciling']) {
    const found = conditions.find((c) => c.type === type && c.status === 'True' && c.message);
    if (found) return found;
  }
  return undefined;
}

/** Applies a phase change (or a new detail in the same phase) to a status. */
export function withPhase(
  status: TransactionStatus,
  phase: Phase,
  detail: PhaseDetail,
  now: Date,
  generation: number | undefined,
  extra: readonly ConditionSpec[] = [],
): TransactionStatus {
  const at = now.toISOString();
  return {
    ...status,
    phase,
    ...(generation !== undefined && { observedGeneration: generation }),
    conditions: mergeConditions(
      status.conditions,
      [...conditionsFor(phase, detail), ...extra],
      at,
      generation,
    ),
    ...(isTerminal(phase) ? { completedAt: at } : {}),
  };
}

/** "3/10": the CHANGES printer column. */
export function progressOf(status: TransactionStatus, total: number): string {
  const committed = (status.items ?? []).filter((i) => i.committed && !i.rolledBack).length;
  return `${committed}/${total}`;
}

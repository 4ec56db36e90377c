/**
 * The health gate, decided from the transaction and the targets' assessed health alone: which
 * targets it waits for, when it starts and gives up, and what the assessments add up to.
 * Pure: reading the targets is the verify stage's job (src/controller/stages/verify.ts).
 */
import { parseDuration } from '../api/duration.ts';
import {
  type Change,
  DEFAULT_HEALTH_TIMEOUT,
  type HealthCheckStatus,
  type ItemHealth,
  type ItemStatus,
  type Transaction,
} from '../api/v1alpha1/index.ts';
import { type HealthAssessment, hasHealthRule } from '../health/index.ts';
import { fitItemHealth } from './fit-status.ts';

export type HealthCheck = NonNullable<HealthCheckStatus['check']>;

/** What the gate needs of one change: its place, what it did and to which kind. */
export interface GateItem {
  index: number;
  change: Pick<Change, 'type' | 'target'>;
}

/**
 * The changes whose targets the gate waits for. After commit: every target still there (not a
 * Delete). After a rollback: every target the rollback put back (not a Create, which it deleted),
 * conflicts aside. `Auto` keeps the kinds with a health rule; `All` every kind; `None` nothing.
 */
export function gatedItems<T extends GateItem>(
  txn: Pick<Transaction, 'spec'>,
  items: readonly T[],
  statuses: readonly ItemStatus[],
  check: HealthCheck,
): T[] {
  const policy = txn.spec.health?.targets ?? 'Auto';
  if (policy === 'None') return [];
  return items.filter((item) => {
    const s = statuses[item.index] ?? {};
    const present =
      check === 'Commit'
        ? s.committed === true && item.change.type !== 'Delete'
        : s.rolledBack === true && item.change.type !== 'Create';
    if (!present) return false;
    return policy === 'All' || hasHealthRule(item.change.target.apiVersion, item.change.target.kind);
  });
}

/** A new check starting now: health.timeout from now, never past the transaction's own deadline. */
export function startCheck(
  txn: Pick<Transaction, 'spec'>,
  check: HealthCheck,
  nowMs: number,
  transactionDeadline: string | undefined,
): HealthCheckStatus {
  const timeoutMs = parseDuration(txn.spec.health?.timeout ?? DEFAULT_HEALTH_TIMEOUT);
  const own = nowMs + timeoutMs;
  const outer = transactionDeadline ? Date.parse(transactionDeadline) : Number.NaN;
  const deadline = Number.isNaN(outer) ? own : Math.min(own, outer);
  return { check, startedAt: new Date(nowMs).toISOString(), deadline: new Date(deadline).toISOString() };
}

/** A check started and not finished: the one the verify stage works on. */
export function pendingCheck(status: { health?: HealthCheckStatus } | undefined): HealthCheck | undefined {
  const health = status?.health;
  return health?.check && health.startedAt && !health.completedAt ? health.check : undefined;
}

export interface Assessed {
  index: number;
  assessment: HealthAssessment;
}

export type GateVerdict =
  | { kind: 'healthy' }
  /** One target cannot become healthy by waiting (ProgressDeadlineExceeded, CrashLoopBackOff …). */
  | { kind: 'unhealthy'; failed: Assessed }
  | { kind: 'timedOut'; pending: Assessed[] }
  | { kind: 'waiting'; pending: Assessed[] };

/** All Current: healthy. A Failed one: unhealthy at once. Otherwise wait, until the deadline. */
export function gateVerdict(
  assessed: readonly Assessed[],
  nowMs: number,
  deadline: string | undefined,
): GateVerdict {
  const failed = assessed.find((a) => a.assessment.status === 'Failed');
  if (failed) return { kind: 'unhealthy', failed };
  const pending = assessed.filter((a) => a.assessment.status !== 'Current');
  if (pending.length === 0) return { kind: 'healthy' };
  const at = deadline ? Date.parse(deadline) : Number.NaN;
  if (!Number.isNaN(at) && nowMs >= at) return { kind: 'timedOut', pending };
  return { kind: 'waiting', pending };
}

/**
 * An item's recorded health after a new assessment: `since` moves only when the status does. The
 * reason and message come from the target (its conditions, its pods' kubelet messages), so they
 * are fitted to the status schema here, where they are compared with what was recorded.
 */
export function itemHealth(previous: ItemHealth | undefined, a: HealthAssessment, nowMs: number): ItemHealth {
  const since =
    previous?.status === a.status && previous.since ? previous.since : new Date(nowMs).toISOString();
  return fitItemHealth({ status: a.status, reason: a.reason, message: a.message, since });
}

/** Whether recording `next` is worth a status write: the status or the reason changed. */
export function healthChanged(previous: ItemHealth | undefined, next: ItemHealth): boolean {
  return previous?.status !== next.status || previous?.reason !== next.reason;
}

/** "Deployment shop/web: …; Job shop/migrate: …", at most `max` named. */
export function describePending(pending: readonly Assessed[], max = 3): string {
  const shown = pending.slice(0, max).map((p) => p.assessment.message);
  return shown.join('; ') + (pending.length > max ? `; and ${pending.length - max} more` : '');
}

/** "12s", "3m4s": how long a check took, for messages and the results branch. */
export function elapsed(fromIso: string | undefined, nowMs: number): string {
  const from = fromIso ? Date.parse(fromIso) : Number.NaN;
  if (Number.isNaN(from)) return '0s';
  const seconds = Math.max(0, Math.round((nowMs - from) / 1000));
  const m = Math.floor(seconds / 60);
  return m > 0 ? `${m}m${seconds % 60}s` : `${seconds}s`;
}

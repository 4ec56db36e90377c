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
import { type HealthAssessment, hasHealthRule, type Restarts } from '../health/index.ts';
import { type BakeWindow, windowLength, windowVerdict } from './bake-window.ts';
import { fitItemHealth } from './fit-status.ts';

export type HealthCheck = NonNullable<HealthCheckStatus['check']>;

/** What the gate needs of one change: its place, what it did and to which kind. */
export interface GateItem {
  index: number;
  change: Pick<Change, 'type' | 'target'>;
}

/**
 * The changes whose targets the gate waits for. After commit: every target still there (not a
 * Delete). After a rollback: every target the rollback put back (not a Create, nor any target
 * prepare found absent, such as a new object of an Apply: the rollback deleted it), conflicts aside. `Auto` keeps the kinds with a health rule; `All` every kind; `None` nothing.
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
        : s.rolledBack === true && item.change.type !== 'Create' && s.resourceVersion !== '';
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
  /** The target's current-revision restarts now (kinds with pods of their own). */
  restarts?: Restarts | undefined;
  /** Its restarts when the bake window opened (status.items[].health.restarts). */
  restartsAtOpen?: number | undefined;
}

export type GateVerdict =
  | { kind: 'healthy'; stableFor?: string }
  /** One target cannot become healthy by waiting (ProgressDeadlineExceeded, CrashLoopBackOff …). */
  | { kind: 'unhealthy'; failed: Assessed }
  | { kind: 'timedOut'; pending: Assessed[]; why?: string }
  | { kind: 'waiting'; pending: Assessed[] }
  /** Healthy, inside the bake window until `untilMs`; `opened`: the window opens at this look. */
  | { kind: 'baking'; untilMs: number; opened: boolean }
  /** Healthy at first, then not, inside the window: `what` names the object and what it did. */
  | { kind: 'regressed'; what: string; into: string; byCheck?: boolean };

/**
 * All Current: healthy, or (with a bake window) the window opens. A Failed one: unhealthy at
 * once. Otherwise wait, until the deadline. Once the window is open (window.since), the window
 * decides: a regression rolls back, its end passes the check.
 */
export function gateVerdict(
  assessed: readonly Assessed[],
  nowMs: number,
  deadline: string | undefined,
  window?: BakeWindow,
): GateVerdict {
  const at = deadline ? Date.parse(deadline) : Number.NaN;
  const pastDeadline = !Number.isNaN(at) && nowMs >= at;
  if (window?.since) {
    const since = window.since;
    const verdict = windowVerdict(assessed, { ...window, since }, nowMs);
    const length = windowLength(window.stableForMs);
    if (verdict.kind === 'stable') return { kind: 'healthy', stableFor: length };
    if (verdict.kind === 'regressed') {
      const into = `${windowLength(nowMs - Date.parse(since))} into the ${length} bake window`;
      return { kind: 'regressed', what: verdict.what, into, ...(verdict.byCheck && { byCheck: true }) };
    }
    if (pastDeadline) {
      return {
        kind: 'timedOut',
        pending: [],
        why: `the ${length} bake window did not end before the transaction's deadline`,
      };
    }
    return { kind: 'baking', untilMs: verdict.untilMs, opened: false };
  }
  const failed = assessed.find((a) => a.assessment.status === 'Failed');
  if (failed) return { kind: 'unhealthy', failed };
  const pending = assessed.filter((a) => a.assessment.status !== 'Current');
  if (pending.length === 0) return openWindow(nowMs, window);
  if (pastDeadline) return { kind: 'timedOut', pending };
  return { kind: 'waiting', pending };
}

/** Every target healthy at the first look: pass, or open the window if it fits in the deadline. */
function openWindow(nowMs: number, window: BakeWindow | undefined): GateVerdict {
  const stableFor = window?.stableForMs ?? 0;
  if (stableFor <= 0) return { kind: 'healthy' };
  const untilMs = nowMs + stableFor;
  const deadlineMs = window?.deadline ? Date.parse(window.deadline) : Number.NaN;
  if (!Number.isNaN(deadlineMs) && untilMs > deadlineMs) {
    const why = `healthy, but the ${windowLength(stableFor)} bake window would end after the transaction's deadline`;
    return { kind: 'timedOut', pending: [], why };
  }
  return { kind: 'baking', untilMs, opened: true };
}

/**
 * An item's recorded health after a new assessment: `since` moves only when the status does. The
 * reason and message come from the target (its conditions, its pods' kubelet messages), so they
 * are fitted to the status schema here, where they are compared with what was recorded.
 */
export function itemHealth(previous: ItemHealth | undefined, a: HealthAssessment, nowMs: number): ItemHealth {
  const same = previous?.status === a.status;
  const since = same && previous.since ? previous.since : new Date(nowMs).toISOString();
  // The restarts recorded when the bake window opened stay while the target stays as it was.
  const restarts = same ? previous.restarts : undefined;
  return fitItemHealth({
    status: a.status,
    reason: a.reason,
    message: a.message,
    since,
    ...(restarts !== undefined && { restarts }),
  });
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

/**
 * The bake window (spec.health.stableFor): once every gated target is healthy, they must stay so
 * for stableFor, locks held, before the commit check passes. Decided from the persisted window
 * (status.health.stableSince, each item's restarts when it opened) and the clock alone, so a
 * controller that restarts mid-window resumes counting from when it opened. Pure.
 */
import { parseDuration } from '../api/duration.ts';
import { DEFAULT_HEALTH_STABLE_FOR, type Transaction } from '../api/v1alpha1/index.ts';
import type { HealthAssessment, Restarts } from '../health/index.ts';

/**
 * What a check run during the window found: the seam for checks beyond the targets' own health
 * (metric analysis, src/analysis/). A Failed one is a regression; the window does not pass while
 * one is still Pending at its end.
 */
export interface WindowCheck {
  /** What is checked, for messages: "error-rate", "http https://shop/healthz". */
  name: string;
  state: 'Passed' | 'Pending' | 'Failed';
  /** What it found, naming the query or URL and the value: the reason of a rollback it causes. */
  message: string;
}

/** The window as the verdict needs it: its length, when it opened (if it did), the checks in it. */
export interface BakeWindow {
  stableForMs: number;
  since?: string | undefined;
  /** The transaction's deadline (status.deadline): a window that would end past it cannot pass. */
  deadline?: string | undefined;
  checks?: readonly WindowCheck[];
}

/** A target's look inside the window: its health, and its restarts now and when the window opened. */
export interface WindowLook {
  index: number;
  assessment: HealthAssessment;
  restarts?: Restarts | undefined;
  restartsAtOpen?: number | undefined;
}

export type WindowVerdict =
  /** Stable for the whole window, every check passed. */
  | { kind: 'stable' }
  /** Holding: healthy so far, the window (or a check) not over. */
  | { kind: 'baking'; untilMs: number }
  /** Healthy at first, then not: `what` names the object and what it did. */
  | { kind: 'regressed'; index?: number; what: string; byCheck?: boolean };

/** spec.health.stableFor in milliseconds (0s when unset: commit at the first healthy look). */
export function stableForMs(txn: Pick<Transaction, 'spec'>): number {
  return parseDuration(txn.spec.health?.stableFor ?? DEFAULT_HEALTH_STABLE_FOR);
}

/** The first regression among the looks, in the order the targets are listed. */
function regression(looks: readonly WindowLook[]): { index: number; what: string } | undefined {
  for (const look of looks) {
    if (look.assessment.status !== 'Current') return { index: look.index, what: look.assessment.message };
    const now = look.restarts?.total ?? 0;
    const before = look.restartsAtOpen;
    if (before !== undefined && now > before) {
      const worst = look.restarts?.worst;
      const who = worst
        ? `pod ${worst.pod} container ${worst.container} restarted (restartCount ${worst.count}${worst.waiting ? `, waiting in ${worst.waiting}` : ''})`
        : 'its pods restarted';
      const subject = look.assessment.message.split(': ')[0];
      return {
        index: look.index,
        what: `${subject}: restarts climbed from ${before} to ${now}: ${who}`,
      };
    }
  }
  return undefined;
}

/**
 * Inside an open window: a target not healthy, restarts climbing or a failed check is a
 * regression; past the window's end with no check pending, stable; otherwise bake on.
 */
export function windowVerdict(
  looks: readonly WindowLook[],
  window: BakeWindow & { since: string },
  nowMs: number,
): WindowVerdict {
  const regressed = regression(looks);
  if (regressed) return { kind: 'regressed', ...regressed };
  const failed = window.checks?.find((c) => c.state === 'Failed');
  if (failed) return { kind: 'regressed', what: `${failed.name}: ${failed.message}`, byCheck: true };
  const untilMs = Date.parse(window.since) + window.stableForMs;
  const pending = window.checks?.some((c) => c.state === 'Pending') ?? false;
  return nowMs >= untilMs && !pending ? { kind: 'stable' } : { kind: 'baking', untilMs };
}

/** How often the window's progress message is rewritten: a tenth of the window, at least 5s. */
export function progressTickMs(stableFor: number): number {
  return Math.max(5_000, Math.ceil(stableFor / 10));
}

const seconds = (ms: number) => {
  const s = Math.max(0, Math.floor(ms / 1000));
  const m = Math.floor(s / 60);
  return m > 0 ? `${m}m${s % 60 ? `${s % 60}s` : ''}` : `${s}s`;
};

/**
 * "stable for 10s of 30s": elapsed time rounded down to the progress tick, so the message (and
 * the status write it causes) changes only once a tick, however often the stage looks.
 */
export function windowProgress(since: string, stableFor: number, nowMs: number): string {
  const tick = progressTickMs(stableFor);
  const elapsedMs = Math.min(stableFor, Math.floor((nowMs - Date.parse(since)) / tick) * tick);
  return `stable for ${seconds(elapsedMs)} of ${seconds(stableFor)}`;
}

/** "30s", "1m30s": the window's length, for messages. */
export const windowLength = (stableFor: number): string => seconds(stableFor);

/**
 * "stable for 12s of 30s", to the second, for a transaction whose bake window is open now (the
 * commit check pending, status.health.stableSince set); undefined otherwise. For readers that
 * compute it when they show it (janus status), not for the status, which would churn.
 */
export function bakeCountdown(txn: Pick<Transaction, 'spec' | 'status'>, nowMs: number): string | undefined {
  const health = txn.status?.health;
  if (health?.check !== 'Commit' || !health.stableSince || health.completedAt) return undefined;
  const stableFor = stableForMs(txn);
  const elapsedMs = Math.min(stableFor, nowMs - Date.parse(health.stableSince));
  return `stable for ${seconds(elapsedMs)} of ${seconds(stableFor)}`;
}

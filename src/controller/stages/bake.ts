/**
 * The bake window's side of the verify stage: opening it (persisting when, and each target's
 * restarts), showing it count down, and being woken at its end. What the window decides is
 * src/saga/bake-window.ts's; this file only writes it and schedules the next look.
 *
 * Crash safety: the window lives in the status alone. A crash before the opening write opens it
 * again at the next healthy look (later: the window only grows); a crash after resumes counting
 * from status.health.stableSince. The requeue is a wake-up, never the truth.
 */
import type { ItemStatus, TransactionStatus } from '../../api/v1alpha1/index.ts';
import { progressTickMs, stableForMs, windowLength, windowProgress } from '../../saga/bake-window.ts';
import type { Assessed, GateVerdict } from '../../saga/health-gate.ts';
import type { SagaRun } from '../context.ts';
import { POLL_MS } from '../health-watch.ts';
import type { Entering, StageResult } from './outcomes.ts';

type Status = TransactionStatus & { items: ItemStatus[] };

interface Look {
  assessed: readonly Assessed[];
  /** A target's recorded health changed: worth a status write. */
  changed: boolean;
  /** A target was read by GET: no watch will say when it changes. */
  polled: boolean;
  entering: Entering | undefined;
  /** When the first metric analysis check measures next (ms), if the window has any. */
  analysisDueMs?: number | undefined;
}

/** Inside the window: record it (opening, or a new progress tick), and look again at its end. */
export async function bake(
  run: SagaRun,
  current: Status,
  verdict: Extract<GateVerdict, { kind: 'baking' }>,
  look: Look,
): Promise<StageResult> {
  const now = run.deps.now();
  const stableFor = stableForMs(run.txn);
  const status = verdict.opened ? openWindow(current, look.assessed, now) : current;
  const since = Date.parse(status.health?.stableSince ?? new Date(now).toISOString());
  const progress = windowProgress(new Date(since).toISOString(), stableFor, now);
  if (look.entering || verdict.opened || look.changed || status.health?.message !== progress) {
    await recordBaking(run, { ...status, health: { ...status.health, message: progress } }, look.entering);
  }
  // Woken at the window's end, the next progress tick, the next measurement due or the deadline
  // (a measurement in flight wakes it when it finishes: src/controller/measurements.ts).
  const tick = progressTickMs(stableFor);
  const nextTick = since + (Math.floor((now - since) / tick) + 1) * tick;
  const deadline = Date.parse(status.health?.deadline ?? '');
  // Past the window's end it waits for a check's measurement in flight, whose end wakes it.
  const wakeAt = Math.min(
    verdict.untilMs > now ? verdict.untilMs : Infinity,
    nextTick,
    look.analysisDueMs ?? Infinity,
    Number.isNaN(deadline) ? Infinity : deadline,
  );
  const after = Math.max(0, wakeAt - now) + 10;
  return { requeueAfterMs: look.polled ? Math.min(POLL_MS, after) : after };
}

/**
 * The window opens: when (stableSince), and each target's restarts so far, to tell restarts
 * climbing inside it. Its deadline becomes the transaction's: health.timeout bounds the time to
 * the first healthy look, the window is bounded by spec.timeout alone.
 */
function openWindow(status: Status, assessed: readonly Assessed[], now: number): Status {
  const items = status.items.map((i) => ({ ...i }));
  for (const a of assessed) {
    const item = items[a.index];
    if (item?.health && a.restarts) item.health = { ...item.health, restarts: a.restarts.total };
  }
  const deadline = status.deadline ?? status.health?.deadline;
  return {
    ...status,
    items,
    health: {
      ...status.health,
      stableSince: new Date(now).toISOString(),
      ...(deadline !== undefined && { deadline }),
    },
  };
}

/** "stable for 10s of 30s; a regression before 30s rolls back" in Ready/Reconciling and Healthy. */
async function recordBaking(
  run: SagaRun,
  status: TransactionStatus,
  entering: Entering | undefined,
): Promise<void> {
  const stableFor = windowLength(stableForMs(run.txn));
  const message = `${status.health?.message ?? 'baking'}; a regression before ${stableFor} rolls back`;
  await run.writeStatus(status, {
    to: entering?.to ?? run.phase,
    detail: entering
      ? { reason: entering.detail.reason, message: `${entering.detail.message}; ${message}` }
      : { reason: 'Baking', message },
    conditions: [{ type: 'Healthy', status: 'True', reason: 'Baking', message }],
  });
}

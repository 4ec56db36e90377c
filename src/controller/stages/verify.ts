/**
 * The health gate. Verifying → Committed once every gated target is healthy by the kstatus
 * rules; → RollingBack when one cannot become healthy or time runs out. After a rollback the
 * restored targets are checked the same way: RollingBack → RolledBack, or Failed when the
 * restored state does not become healthy either (a human must look).
 *
 * With a bake window (spec.health.stableFor) the commit check holds once every target is
 * healthy: the window opens (status.health.stableSince, each item's restarts), and the check
 * passes at its end, or rolls back at the first regression inside it (src/saga/bake-window.ts).
 *
 * Reads only: the targets come from shared watches (health-watch.ts), and the status is written
 * when a target's health changes, so a restart at any instant resumes by simply looking again;
 * an open window is counted from its persisted start, never from a timer in memory.
 * Locks stay held (and renewed) while the commit is checked: nobody else's change may land on a
 * target that might still be rolled back.
 */

import type { ItemStatus, TransactionStatus } from '../../api/v1alpha1/index.ts';
import { refOf } from '../../changes/change-context.ts';
import { assessHealth, type HealthAssessment, restartsOf } from '../../health/index.ts';
import { LockLostError } from '../../locks/lease-locks.ts';
import { stableForMs } from '../../saga/bake-window.ts';
import { type FinishedVerdict, gateOutcome } from '../../saga/gate-outcome.ts';
import {
  type Assessed,
  describePending,
  elapsed,
  gatedItems,
  gateVerdict,
  type HealthCheck,
  healthChanged,
  itemHealth,
  pendingCheck,
} from '../../saga/health-gate.ts';
import { describeTarget } from '../../saga/targets.ts';
import type { Item, SagaRun } from '../context.ts';
import { POLL_MS } from '../health-watch.ts';
import { blockWrites, confirmLock } from '../locking.ts';
import { type Analysed, analyse } from './analysis.ts';
import { bake } from './bake.ts';
import { forceRollback } from './forced-rollback.ts';
import { abort, committedMessage, type Entering, type StageResult } from './outcomes.ts';

/**
 * Looks at the gated targets once. `entering` is the check a stage that made (or undid) the
 * changes starts (the commit, or a rollback that undid them all): its status is not written
 * yet, and is written only if the check must wait. Otherwise the check is the pending one in
 * the status.
 */
export async function verify(run: SagaRun, entering?: Entering): Promise<StageResult> {
  const { deps } = run;
  const base = entering?.status ?? run.status;
  const check: HealthCheck = pendingCheck(base) ?? 'Commit';
  const items: ItemStatus[] = (base.items ?? []).map((i) => ({ ...i }));
  const gated = gatedItems(run.txn, run.items, items, check);

  if (check === 'Commit') {
    try {
      for (const item of run.items) await confirmLock(run, item);
    } catch (e) {
      if (!(e instanceof LockLostError)) throw e;
      deps.health.release(run.name);
      return abort(
        run,
        { ...base, items },
        { reason: 'LockLost', message: `while checking health: ${e.message}` },
      );
    }
    // The entries already block writes; this only says so in the refusals (one apply, once).
    await blockWrites(run, 'Verifying');
  }

  const { assessed, changed, polled } = await look(run, gated, items, check);
  const now = deps.now();
  const stableFor = check === 'Commit' ? stableForMs(run.txn) : 0;
  // Metric analysis runs inside an open window only; its measurements join the status written next.
  const analysed = await analyseWindow(run, check, base, now, stableFor);
  const current = analysed.changed && analysed.health ? { ...base, health: analysed.health } : base;
  const window = {
    stableForMs: stableFor,
    since: base.health?.stableSince,
    deadline: base.deadline,
    checks: analysed.checks,
  };
  const verdict = gateVerdict(assessed, now, base.health?.deadline, window);
  if (verdict.kind === 'waiting') {
    if (entering || changed) await recordProgress(run, { ...current, items }, verdict.pending, entering);
    const deadline = Date.parse(base.health?.deadline ?? '');
    const untilDeadline = Number.isNaN(deadline) ? POLL_MS : Math.max(0, deadline - now) + 10;
    return { requeueAfterMs: polled ? Math.min(POLL_MS, untilDeadline) : untilDeadline };
  }
  if (verdict.kind === 'baking') {
    const lookChanged = changed || analysed.changed;
    const look = { assessed, changed: lookChanged, polled, entering, analysisDueMs: analysed.dueMs };
    return bake(run, { ...current, items }, verdict, look);
  }
  deps.health.release(run.name);
  return finish(run, { ...current, items }, check, verdict);
}

/** The bake window's metric analysis: the commit check's alone (a rollback is not analysed). */
function analyseWindow(
  run: SagaRun,
  check: HealthCheck,
  base: TransactionStatus,
  now: number,
  stableFor: number,
): Promise<Analysed> {
  if (check !== 'Commit') {
    return Promise.resolve({ checks: [], health: base.health, changed: false, dueMs: undefined });
  }
  return analyse(run, base.health, now, Date.parse(base.health?.stableSince ?? '') + stableFor);
}

/** Looks at the gated targets, recording each one's health in `items`; `changed`: worth a write. */
async function look(
  run: SagaRun,
  gated: readonly Item[],
  items: ItemStatus[],
  check: HealthCheck,
): Promise<{ assessed: Assessed[]; changed: boolean; polled: boolean }> {
  const observed = await run.deps.health.observe(run.name, gated.map(refOf), run.asServiceAccount());
  // After a rollback: the stuck pods its controller will not replace are deleted (or a human told).
  const forced =
    check === 'Rollback'
      ? await forceRollback(run, gated, observed, items)
      : new Map<number, HealthAssessment>();
  const now = run.deps.now();
  const assessed: Assessed[] = gated.map((item, k) => {
    const object = observed[k]?.object;
    return {
      index: item.index,
      assessment: forced.get(item.index) ?? assess(item, object, observed[k]?.related, check),
      restarts: object ? restartsOf(object, observed[k]?.related) : undefined,
      restartsAtOpen: items[item.index]?.health?.restarts,
    };
  });
  let changed = false;
  for (const a of assessed) {
    const previous = items[a.index]?.health;
    const next = itemHealth(previous, a.assessment, now);
    if (healthChanged(previous, next)) changed = true;
    items[a.index] = { ...items[a.index], health: next };
  }
  return { assessed, changed, polled: observed.some((o) => o.polled) };
}

function assess(
  item: Item,
  object: Parameters<typeof assessHealth>[0] | undefined,
  related: Parameters<typeof assessHealth>[1] | undefined,
  check: HealthCheck,
): HealthAssessment {
  if (object) return assessHealth(object, related);
  return {
    status: 'Failed',
    reason: 'NotFound',
    message: `${describeTarget(item.target)} no longer exists (deleted after the ${check === 'Commit' ? 'commit' : 'rollback'})`,
  };
}

/** Still waiting: show which targets and why, in Ready/Reconciling and the Healthy condition. */
async function recordProgress(
  run: SagaRun,
  status: TransactionStatus,
  pending: Assessed[],
  entering: Entering | undefined,
): Promise<void> {
  const first = pending[0]?.assessment;
  const message = `waiting for ${describePending(pending)}`;
  const until = ` until ${status.health?.deadline ?? 'the deadline'}`;
  await run.writeStatus(status, {
    to: entering?.to ?? run.phase,
    detail: entering
      ? { reason: entering.detail.reason, message: `${entering.detail.message}; ${message}${until}` }
      : { reason: 'AwaitingHealth', message },
    conditions: [{ type: 'Healthy', status: 'False', reason: first?.reason ?? 'InProgress', message }],
  });
}

/** The check is over: record its result and move on as gateOutcome decides. */
async function finish(
  run: SagaRun,
  status: TransactionStatus & { items: ItemStatus[] },
  check: HealthCheck,
  verdict: FinishedVerdict,
): Promise<StageResult> {
  const { deps } = run;
  const now = deps.now();
  const startedAt = status.health?.startedAt;
  const seconds = (now - Date.parse(startedAt ?? new Date(now).toISOString())) / 1000;
  const made =
    check === 'Commit'
      ? committedMessage(run)
      : (status.health?.message ??
        `${status.items.filter((i) => i.rolledBack).length} committed change(s) rolled back`);
  const outcome = gateOutcome(check, verdict, {
    took: elapsed(startedAt, now),
    gated: gatedItems(run.txn, run.items, status.items, check).length,
    made,
  });
  deps.metrics.healthCheck(check, outcome.result, Math.max(0, seconds));
  const health = {
    ...status.health,
    completedAt: new Date(now).toISOString(),
    result: outcome.result,
    message: outcome.why,
  };
  const finished = { ...status, health };
  const detail = { reason: outcome.reason, message: outcome.message };
  if (outcome.to === 'RollingBack') {
    await run.event('Warning', outcome.reason, outcome.why);
    return abort(run, finished, detail, [outcome.healthy]);
  }
  return { txn: await run.writeStatus(finished, { to: outcome.to, detail, conditions: [outcome.healthy] }) };
}

/**
 * The health gate. Verifying → Committed once every gated target is healthy by the kstatus
 * rules; → RollingBack when one cannot become healthy or time runs out. After a rollback the
 * restored targets are checked the same way: RollingBack → RolledBack, or Failed when the
 * restored state does not become healthy either (a human must look).
 *
 * Reads only: the targets come from shared watches (health-watch.ts), and the status is written
 * when a target's health changes, so a restart at any instant resumes by simply looking again.
 * Locks stay held (and renewed) while the commit is checked: nobody else's change may land on a
 * target that might still be rolled back.
 */

import type { HealthCheckStatus, ItemStatus, TransactionStatus } from '../../api/v1alpha1/index.ts';
import { assessHealth, type HealthAssessment } from '../../health/index.ts';
import { LockLostError } from '../../locks/lease-locks.ts';
import {
  type Assessed,
  describePending,
  elapsed,
  type GateVerdict,
  gatedItems,
  gateVerdict,
  type HealthCheck,
  healthChanged,
  itemHealth,
  pendingCheck,
} from '../../saga/health-gate.ts';
import type { ConditionSpec, PhaseDetail } from '../../saga/status.ts';
import { describeTarget } from '../../saga/targets.ts';
import { refOf } from '../changes.ts';
import type { Item, SagaRun } from '../context.ts';
import { POLL_MS } from '../health-watch.ts';
import { confirmLock } from '../locking.ts';
import { abort, committedMessage } from './commit.ts';
import type { StageResult } from './lifecycle.ts';

type HealthResult = NonNullable<HealthCheckStatus['result']>;

/** How a stage that just made (or undid) the changes enters the check if it must wait. */
export interface Entering {
  to: 'Verifying' | 'RollingBack';
  detail: PhaseDetail;
}

/**
 * Starts a check from the stage that made the changes (the commit, or a rollback that undid them
 * all), with `status` holding the new check. The first look comes before any write, so targets
 * healthy at once (a ClusterIP Service, a rollout already complete) cost no extra status write;
 * otherwise the status enters the check (Verifying, or RollingBack with the check pending).
 */
export function startGate(run: SagaRun, status: TransactionStatus, entering: Entering): Promise<StageResult> {
  run.txn = { ...run.txn, status };
  return verify(run, entering);
}

export async function verify(run: SagaRun, entering?: Entering): Promise<StageResult> {
  const { deps } = run;
  const check: HealthCheck = pendingCheck(run.status) ?? 'Commit';
  const items: ItemStatus[] = (run.status.items ?? []).map((i) => ({ ...i }));
  const gated = gatedItems(run.txn, run.items, items, check);

  if (check === 'Commit') {
    try {
      for (const item of run.items) await confirmLock(run, item);
    } catch (e) {
      if (!(e instanceof LockLostError)) throw e;
      deps.health.release(run.name);
      return abort(run, items, { reason: 'LockLost', message: `while checking health: ${e.message}` });
    }
  }

  const observed = await deps.health.observe(run.name, gated.map(refOf), run.asServiceAccount());
  const now = deps.now();
  const assessed: Assessed[] = gated.map((item, k) => ({
    index: item.index,
    assessment: assess(item, observed[k]?.object, observed[k]?.related, check),
  }));
  let changed = false;
  for (const a of assessed) {
    const previous = items[a.index]?.health;
    const next = itemHealth(previous, a.assessment, now);
    if (healthChanged(previous, next)) changed = true;
    items[a.index] = { ...items[a.index], health: next };
  }

  const verdict = gateVerdict(assessed, now, run.status.health?.deadline);
  if (verdict.kind === 'waiting') {
    if (entering || changed) await recordProgress(run, items, verdict.pending, entering);
    const deadline = Date.parse(run.status.health?.deadline ?? '');
    const untilDeadline = Number.isNaN(deadline) ? POLL_MS : Math.max(0, deadline - now) + 10;
    const polled = observed.some((o) => o.polled);
    return { requeueAfterMs: polled ? Math.min(POLL_MS, untilDeadline) : untilDeadline };
  }
  deps.health.release(run.name);
  return finish(run, items, check, verdict);
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
  items: ItemStatus[],
  pending: Assessed[],
  entering: Entering | undefined,
): Promise<void> {
  const first = pending[0]?.assessment;
  const message = `waiting for ${describePending(pending)}`;
  const until = ` until ${run.status.health?.deadline ?? 'the deadline'}`;
  await run.writeStatus(
    { ...run.status, items },
    {
      to: entering?.to ?? run.phase,
      detail: entering
        ? { reason: entering.detail.reason, message: `${entering.detail.message}; ${message}${until}` }
        : { reason: 'AwaitingHealth', message },
      conditions: [{ type: 'Healthy', status: 'False', reason: first?.reason ?? 'InProgress', message }],
    },
  );
}

async function finish(
  run: SagaRun,
  items: ItemStatus[],
  check: HealthCheck,
  verdict: Exclude<GateVerdict, { kind: 'waiting' }>,
): Promise<StageResult> {
  const { deps } = run;
  const now = deps.now();
  const took = elapsed(run.status.health?.startedAt, now);
  const seconds = (now - Date.parse(run.status.health?.startedAt ?? new Date(now).toISOString())) / 1000;
  const result: HealthResult =
    verdict.kind === 'healthy' ? 'Healthy' : verdict.kind === 'unhealthy' ? 'Unhealthy' : 'TimedOut';
  deps.metrics.healthCheck(check, result, Math.max(0, seconds));
  const why =
    verdict.kind === 'healthy'
      ? `${gatedCount(run, items, check)} target(s) healthy after ${took}`
      : verdict.kind === 'unhealthy'
        ? `${verdict.failed.assessment.message} (after ${took})`
        : `not healthy within ${took}: ${describePending(verdict.pending)}`;
  const health = { ...run.status.health, completedAt: new Date(now).toISOString(), result, message: why };
  const reason =
    verdict.kind === 'healthy'
      ? 'Healthy'
      : verdict.kind === 'unhealthy'
        ? 'HealthCheckFailed'
        : 'HealthCheckTimeout';
  const healthy: ConditionSpec = {
    type: 'Healthy',
    status: verdict.kind === 'healthy' ? 'True' : 'False',
    reason: verdict.kind === 'healthy' ? 'TargetsHealthy' : reason,
    message: why,
  };
  const status: TransactionStatus = { ...run.status, items, health };

  if (check === 'Commit') {
    if (verdict.kind === 'healthy') {
      return {
        txn: await run.writeStatus(status, {
          to: 'Committed',
          detail: { reason: 'Committed', message: `${committedMessage(run)}; ${why}` },
          conditions: [healthy],
        }),
      };
    }
    await run.event('Warning', reason, why);
    return abort(run, items, { reason, message: why }, { health }, [healthy]);
  }

  const undone =
    run.status.health?.message ??
    `${items.filter((i) => i.rolledBack).length} committed change(s) rolled back`;
  if (verdict.kind === 'healthy') {
    return {
      txn: await run.writeStatus(status, {
        to: 'RolledBack',
        detail: { reason: 'RolledBack', message: `${undone}; ${why}` },
        conditions: [healthy],
      }),
    };
  }
  return {
    txn: await run.writeStatus(status, {
      to: 'Failed',
      detail: {
        reason: 'RollbackUnhealthy',
        message: `${undone}, but the restored state is not healthy: ${why}`,
      },
      conditions: [healthy],
    }),
  };
}

function gatedCount(run: SagaRun, items: ItemStatus[], check: HealthCheck): number {
  return gatedItems(run.txn, run.items, items, check).length;
}

/**
 * Committing → Committed: apply each change in order, each conditional on the state seen at
 * prepare. Progress is not checkpointed per change: after a crash the same loop runs again and
 * recognises its own earlier writes (changes.ts), so no change is applied twice and none is
 * mistaken for a conflict. Any failure moves to RollingBack with exactly what was committed.
 */

import { parseDuration } from '../../api/duration.ts';
import type { ItemStatus } from '../../api/v1alpha1/index.ts';
import { LockLostError } from '../../locks/lease-locks.ts';
import { gatedItems, startCheck } from '../../saga/health-gate.ts';
import type { ConditionSpec } from '../../saga/status.ts';
import { commit as commitChange, probe } from '../changes.ts';
import type { SagaRun } from '../context.ts';
import { confirmLock } from '../locking.ts';
import type { StageResult } from './lifecycle.ts';
import { isPastDeadline } from './prepare.ts';
import { startGate } from './verify.ts';

export async function commit(run: SagaRun): Promise<StageResult> {
  const { deps } = run;
  const items: ItemStatus[] = (run.status.items ?? []).map((i) => ({ ...i }));
  for (const item of run.items) {
    const state = items[item.index] ?? {};
    if (state.committed) continue;

    let failure: { reason: string; message: string } | undefined;
    if (isPastDeadline(run)) {
      failure = {
        reason: 'Timeout',
        message: `the deadline passed before change ${item.index} was committed`,
      };
    } else {
      try {
        await confirmLock(run, item);
      } catch (e) {
        if (!(e instanceof LockLostError)) throw e;
        failure = { reason: 'LockLost', message: `change ${item.index}: ${e.message}` };
      }
    }
    if (failure) {
      // Changes after this one may have been applied before a restart: find them first.
      await recogniseApplied(run, items, item.index);
      return abort(run, items, failure);
    }

    const result = await commitChange(run, item, state);
    if (result.kind === 'committed') {
      items[item.index] = {
        ...state,
        committed: true,
        committedResourceVersion: result.resourceVersion,
        committedFingerprint: result.fingerprint,
        error: '',
      };
      deps.metrics.itemOperation('commit', 'success');
      continue;
    }
    deps.metrics.itemOperation('commit', result.kind === 'conflict' ? 'conflict' : 'error');
    items[item.index] = { ...state, error: result.message };
    return abort(run, items, {
      reason: result.kind === 'conflict' ? 'Conflict' : 'CommitFailed',
      message: result.message,
    });
  }
  const committed = committedMessage(run);
  const gated = gatedItems(run.txn, run.items, items, 'Commit');
  if (gated.length === 0) {
    return {
      txn: await run.writeStatus(
        { ...run.status, items },
        { to: 'Committed', detail: { reason: 'Committed', message: committed } },
      ),
    };
  }
  const health = startCheck(run.txn, 'Commit', deps.now(), run.status.deadline);
  return startGate(
    run,
    { ...run.status, items, health },
    { to: 'Verifying', detail: { reason: 'AwaitingHealth', message: committed } },
  );
}

/** Marks as committed the changes from `from` on that are already in place (stops at the first that is not). */
async function recogniseApplied(run: SagaRun, items: ItemStatus[], from: number): Promise<void> {
  for (const item of run.items.slice(from)) {
    const state = items[item.index] ?? {};
    if (state.committed) continue;
    const applied = await probe(run, item);
    if (applied === undefined) return;
    items[item.index] = {
      ...state,
      committed: true,
      committedResourceVersion: applied.resourceVersion,
      committedFingerprint: applied.fingerprint,
    };
  }
}

/**
 * Nothing committed: Failed at once. Otherwise RollingBack, with a fresh deadline of its own:
 * a transaction that ran out of time must still get the time to undo what it did.
 */
export async function abort(
  run: SagaRun,
  items: ItemStatus[],
  why: { reason: string; message: string },
  extra: Pick<Parameters<SagaRun['writeStatus']>[0], 'health'> = {},
  conditions: readonly ConditionSpec[] = [],
): Promise<StageResult> {
  const committed = items.filter((i) => i.committed).length;
  if (committed === 0) {
    return { txn: await run.writeStatus({ ...run.status, items }, { to: 'Failed', detail: why }) };
  }
  const deadline = new Date(run.deps.now() + parseDuration(run.txn.spec.timeout ?? '30m')).toISOString();
  return {
    txn: await run.writeStatus(
      { ...run.status, ...extra, items, deadline },
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
  return `${total}/${total} changes committed: ${summary(run)}`;
}

function summary(run: SagaRun): string {
  const shown = run.items.slice(0, 10).map((i) => `${i.change.type} ${i.target.kind} ${i.target.name}`);
  return shown.join(', ') + (run.items.length > 10 ? `, and ${run.items.length - 10} more` : '');
}

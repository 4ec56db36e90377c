/**
 * Committing → Committed: apply each change in order, each conditional on the state seen at
 * prepare. Progress is not checkpointed per change: after a crash the same loop runs again and
 * recognises its own earlier writes (src/changes), so no change is applied twice and none is
 * mistaken for a conflict. Any failure moves to RollingBack with exactly what was committed.
 */

import type { ItemStatus } from '../../api/v1alpha1/index.ts';
import { commit as commitChange, probe } from '../../changes/operations.ts';
import { LockLostError } from '../../locks/lease-locks.ts';
import { gatedItems, startCheck } from '../../saga/health-gate.ts';
import type { SagaRun } from '../context.ts';
import { confirmLock } from '../locking.ts';
import { abort, committedMessage, enterCheck, isPastDeadline, type StageOutcome } from './outcomes.ts';

export async function commit(run: SagaRun): Promise<StageOutcome> {
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
      return abort(run, { ...run.status, items }, failure);
    }

    const result = await commitChange(run.changeContext(), item, state);
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
    return abort(
      run,
      { ...run.status, items },
      {
        reason: result.kind === 'conflict' ? 'Conflict' : 'CommitFailed',
        message: result.message,
      },
    );
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
  return enterCheck({
    status: { ...run.status, items, health },
    to: 'Verifying',
    detail: { reason: 'AwaitingHealth', message: committed },
  });
}

/** Marks as committed the changes from `from` on that are already in place (stops at the first that is not). */
async function recogniseApplied(run: SagaRun, items: ItemStatus[], from: number): Promise<void> {
  for (const item of run.items.slice(from)) {
    const state = items[item.index] ?? {};
    if (state.committed) continue;
    const applied = await probe(run.changeContext(), item);
    if (applied === undefined) return;
    items[item.index] = {
      ...state,
      committed: true,
      committedResourceVersion: applied.resourceVersion,
      committedFingerprint: applied.fingerprint,
    };
  }
}

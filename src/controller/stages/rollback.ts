/**
 * RollingBack → RolledBack: undo every committed change in reverse order from the rollback
 * store. A target someone else changed after our commit is left alone and reported as a
 * conflict; the others are still undone. Failures that a retry may fix schedule a bounded,
 * backed-off automatic retry; conflicts wait for a human (retry-rollback, janus recover).
 */
import type { ItemStatus, TransactionStatus } from '../../api/v1alpha1/index.ts';
import { undo } from '../../changes/operations.ts';
import type { UndoResult } from '../../changes/results.ts';
import { isNotFound } from '../../kube/errors.ts';
import { StoreIndexError } from '../../rollback-store/codec.ts';
import { SnapshotTamperedError, type StoreReader } from '../../rollback-store/store.ts';
import { MAX_RECOVERY_ATTEMPTS } from '../../saga/decide.ts';
import { gatedItems, startCheck } from '../../saga/health-gate.ts';
import { describeTarget } from '../../saga/targets.ts';
import type { Item, SagaRun } from '../context.ts';
import { holdLocks } from '../locking.ts';
import { recordRolloutRevisions } from './forced-rollback.ts';
import { enterCheck, isPastDeadline, lockWait, nextRecovery, type StageOutcome } from './outcomes.ts';

export async function rollback(run: SagaRun): Promise<StageOutcome> {
  const { deps, txn } = run;
  const items: ItemStatus[] = (run.status.items ?? []).map((i) => ({ ...i }));
  const pending = run.items.filter((i) => {
    const s = items[i.index];
    return s?.committed && !s.rolledBack && !s.conflict;
  });
  pending.reverse();

  if (isPastDeadline(run)) return finish(run, items, 'the rollback deadline passed');
  const refusal = await deps.serviceAccounts.refusal(
    txn.metadata.namespace ?? '',
    txn.spec.serviceAccountName,
  );
  if (refusal) return finish(run, items, refusal.message);
  const locked = await holdLocks(run, pending, { rollingBack: true });
  if (!locked.held) return lockWait(run, locked.message, locked.retryInMs);

  let reader: StoreReader;
  try {
    reader = await deps.store.open(txn);
  } catch (e) {
    if (e instanceof StoreIndexError)
      return finish(run, items, `the rollback store ConfigMap ${run.status.rollbackRef}: ${e.message}`);
    if (!isNotFound(e)) throw e;
    return finish(
      run,
      items,
      `the rollback store ConfigMap ${run.status.rollbackRef} is missing: prior states are lost`,
    );
  }

  await recordRolloutRevisions(run, pending, items);
  for (const item of pending) {
    if (isPastDeadline(run)) return finish(run, items, 'the rollback deadline passed');
    const state = items[item.index] ?? {};
    const result = await undoFromStore(run, reader, item, state);
    if (result.kind === 'undone') {
      items[item.index] = { ...state, rolledBack: true, error: '' };
      deps.metrics.itemOperation('rollback', 'success');
    } else {
      const conflict = result.kind === 'conflict';
      items[item.index] = { ...state, conflict, error: result.message };
      deps.metrics.itemOperation('rollback', conflict ? 'conflict' : 'error');
      await run.event('Warning', conflict ? 'RollbackConflict' : 'RollbackFailed', result.message);
    }
  }
  return finish(run, items, undefined);
}

/** Undoes one change with the prior state prepare stored, and only that one. */
async function undoFromStore(
  run: SagaRun,
  reader: StoreReader,
  item: Item,
  state: ItemStatus,
): Promise<UndoResult> {
  try {
    const { prior } = await reader.snapshot(item.index, {
      target: item.target,
      digest: state.snapshotDigest,
    });
    return await undo(run.changeContext(), item, state, prior);
  } catch (e) {
    if (!(e instanceof SnapshotTamperedError)) throw e;
    return { kind: 'failed', message: `${describeTarget(item.target)}: ${e.message}` };
  }
}

/** RolledBack when nothing committed is left standing; otherwise Failed, saying exactly what is. */
async function finish(
  run: SagaRun,
  items: ItemStatus[],
  stoppedBecause: string | undefined,
): Promise<StageOutcome> {
  const left = run.items.filter((i) => items[i.index]?.committed && !items[i.index]?.rolledBack);
  const undone = run.items.filter((i) => items[i.index]?.rolledBack).length;
  const { nextRecoveryAt: _next, ...rest } = run.status;
  const status: TransactionStatus = { ...rest, items };
  if (left.length === 0) {
    const gated = gatedItems(run.txn, run.items, items, 'Rollback');
    if (gated.length > 0) {
      const health = startCheck(run.txn, 'Rollback', run.deps.now(), run.status.deadline);
      const undoneMessage = `${undone} committed change(s) rolled back${causeOf(run)}`;
      // The check's message keeps why the rollback happened, for the RolledBack message after it.
      return enterCheck({
        status: { ...status, health: { ...health, message: undoneMessage } },
        to: 'RollingBack',
        detail: { reason: 'AwaitingHealth', message: undoneMessage },
      });
    }
    return {
      txn: await run.writeStatus(status, {
        to: 'RolledBack',
        detail: { reason: 'RolledBack', message: `${undone} committed change(s) rolled back${causeOf(run)}` },
      }),
    };
  }
  const conflicts = left.filter((i) => items[i.index]?.conflict);
  const others = left.filter((i) => !items[i.index]?.conflict);
  const parts: string[] = [];
  if (stoppedBecause) parts.push(`rollback stopped: ${stoppedBecause}`);
  if (conflicts.length > 0) {
    parts.push(
      `left as they are because someone else changed them after commit: ${conflicts.map((i) => describeTarget(i.target)).join(', ')}`,
    );
  }
  if (others.length > 0) {
    parts.push(`not rolled back yet: ${others.map((i) => describeTarget(i.target)).join(', ')}`);
    if ((run.status.recoveryAttempts ?? 0) < MAX_RECOVERY_ATTEMPTS) status.nextRecoveryAt = nextRecovery(run);
  }
  parts.push(`see \`janus recover ${run.txn.metadata.name} -n ${run.txn.metadata.namespace}\``);
  return {
    txn: await run.writeStatus(status, {
      to: 'Failed',
      detail: {
        reason: conflicts.length > 0 ? 'RollbackConflict' : 'RollbackFailed',
        message: parts.join('; '),
      },
    }),
  };
}

function causeOf(run: SagaRun): string {
  const why = run.status.conditions?.find((c) => c.type === 'Reconciling')?.message;
  return why ? ` (${why})` : '';
}

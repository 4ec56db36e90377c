/**
 * The operations of one change as the controller makes them: commit, "is my write already
 * there?" (probe), and undo. Every write carries the resourceVersion its decision was based on,
 * so a concurrent write makes it fail instead of being overwritten; a failed precondition is then
 * told apart from this transaction's own earlier write (a restart) by the applied-by annotation
 * or content. What each type sends is its strategy's (strategy.ts).
 */
import type { ItemStatus } from '../api/v1alpha1/index.ts';
import { isAlreadyExists, isConflict, isNotFound, isTransient } from '../kube/errors.ts';
import type { KubeObject } from '../kube/resources.ts';
import { describeTarget } from '../saga/targets.ts';
import { type ChangeContext, type ChangeItem, describeFailure, refOf } from './change-context.ts';
import { type CommitResult, type Committed, committed, gone, type UndoResult } from './results.ts';
import { isDecryptionRefusal } from './sops-content.ts';
import { strategyOf } from './strategy.ts';
import { contentFingerprint } from './undo-rules.ts';

/** Applies a change, conditionally on the resourceVersion seen at prepare. */
export async function commit(
  ctx: ChangeContext,
  item: ChangeItem,
  prepared: ItemStatus,
): Promise<CommitResult> {
  try {
    return await strategyOf(item).commit(ctx, item, prepared.resourceVersion || undefined);
  } catch (e) {
    if (isConflict(e) || isAlreadyExists(e) || isNotFound(e)) {
      const ours = await probe(ctx, item);
      if (ours !== undefined) return ours;
      return { kind: 'conflict', message: conflictMessage(item, e) };
    }
    if (isDecryptionRefusal(e)) return { kind: 'failed', message: describeFailure(item, 'decryption', e) };
    if (isTransient(e)) throw e;
    return { kind: 'failed', message: describeFailure(item, item.change.type.toLowerCase(), e) };
  }
}

function conflictMessage(item: ChangeItem, e: unknown): string {
  const what = describeTarget(item.target);
  if (isAlreadyExists(e)) return `change ${item.index}: ${what} was created by someone else after prepare`;
  if (isNotFound(e)) return `change ${item.index}: ${what} was deleted by someone else after prepare`;
  return `change ${item.index}: ${what} was changed by someone else after prepare`;
}

/**
 * Whether this transaction's write of `item` is in place (after a restart, a retry, or before a
 * rollback whose progress was not recorded): what the commit left if so.
 */
export async function probe(ctx: ChangeContext, item: ChangeItem): Promise<Committed | undefined> {
  const current = await ctx.objects.find(refOf(item));
  if (!strategyOf(item).isApplied(ctx.txn, item, current)) return undefined;
  return current ? committed(current, true) : gone(true);
}

/** A controller writing status after our commit is not a conflict; let the undo try again. */
const MAX_UNDO_ATTEMPTS = 5;

/**
 * Undoes a committed change, conditionally on the resourceVersion our commit left. When the
 * target moved on only by its controller's status writes (its content fingerprint is still the
 * one our commit left), the undo is made against the newer resourceVersion instead.
 */
export async function undo(
  ctx: ChangeContext,
  item: ChangeItem,
  status: ItemStatus,
  prior: KubeObject | undefined,
): Promise<UndoResult> {
  let rv = status.committedResourceVersion || undefined;
  for (let attempt = 1; ; attempt++) {
    const result = await undoAt(ctx, item, prior, rv);
    if (result.kind !== 'stale' || attempt >= MAX_UNDO_ATTEMPTS) {
      return result.kind === 'stale' ? await judgeConflict(ctx, item, prior) : result;
    }
    const current = await ctx.objects.find(refOf(item));
    if (
      !current ||
      !status.committedFingerprint ||
      contentFingerprint(current) !== status.committedFingerprint
    ) {
      return judgeConflict(ctx, item, prior, current ?? null);
    }
    rv = current.metadata.resourceVersion;
  }
}

type UndoAttempt = UndoResult | { kind: 'stale' };

async function undoAt(
  ctx: ChangeContext,
  item: ChangeItem,
  prior: KubeObject | undefined,
  rv: string | undefined,
): Promise<UndoAttempt> {
  try {
    await strategyOf(item).undo(ctx, item, prior, rv);
    return { kind: 'undone' };
  } catch (e) {
    if (isTransient(e)) throw e;
    if (isConflict(e) && rv) return { kind: 'stale' };
    if (!(isConflict(e) || isAlreadyExists(e) || isNotFound(e))) {
      return { kind: 'failed', message: describeFailure(item, 'rollback', e) };
    }
    return judgeConflict(ctx, item, prior);
  }
}

/**
 * The undo could not be made as it was: already made before a restart (the target holds what
 * the rollback would write), or someone else changed the target after our commit.
 */
async function judgeConflict(
  ctx: ChangeContext,
  item: ChangeItem,
  prior: KubeObject | undefined,
  read?: KubeObject | null,
): Promise<UndoResult> {
  const conflict = (detail: string): UndoResult => ({
    kind: 'conflict',
    message: `${describeTarget(item.target)} ${detail} after change ${item.index} was committed`,
  });
  const current = read === undefined ? await ctx.objects.find(refOf(item)) : (read ?? undefined);
  if (!prior) return current ? conflict('was changed by someone else') : { kind: 'undone' };
  if (!current) return conflict('was deleted by someone else');
  return strategyOf(item).isUndone(ctx.txn, item, prior, current)
    ? { kind: 'undone' }
    : conflict('was changed by someone else');
}

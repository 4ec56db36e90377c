/** Delete: a target already gone is fine; the undo re-creates the prior object. */
import { isNotFound } from '../kube/errors.ts';
import { committedFieldManager } from '../saga/targets.ts';
import { refOf } from './change-context.ts';
import { restoredObject } from './restore.ts';
import { gone } from './results.ts';
import { holdsPrior } from './shared-steps.ts';
import type { ChangeStrategy } from './strategy.ts';

export const deleteStrategy: ChangeStrategy = {
  existence: 'either',
  async dryRun(ctx, item) {
    await ctx.objects.delete(refOf(item), { dryRun: true });
    return undefined;
  },
  async commit(ctx, item, resourceVersion) {
    if (!resourceVersion) return gone(false); // nothing was there
    try {
      await ctx.objects.delete(refOf(item), { preconditions: { resourceVersion } });
      return gone(false);
    } catch (e) {
      if (isNotFound(e)) return gone(true); // already gone: idempotent
      throw e;
    }
  },
  isApplied: (_txn, _item, current) => current === undefined,
  async undo(ctx, _item, prior) {
    if (!prior) return; // the delete found nothing to delete
    await ctx.objects.create(restoredObject(prior), { fieldManager: committedFieldManager(ctx.txn) });
  },
  isUndone: holdsPrior,
};

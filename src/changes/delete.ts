/**
 * Delete: a target already gone is fine; the undo re-creates the prior object. A source's prune
 * (spec.sourceRef) re-creates by a server-side apply of the source's manager what that manager
 * had applied, so the source owns the object again as before and a later commit that drops one of
 * its fields removes it.
 */
import { isNotFound } from '../kube/errors.ts';
import { committedFieldManager, sourceManagerOf } from '../saga/targets.ts';
import { refOf } from './change-context.ts';
import type { ChangeStrategy } from './change-strategy.ts';
import { appliedEntry } from './managed-fields.ts';
import { restoredObject } from './restore.ts';
import { gone } from './results.ts';
import { alreadyExists, holdsPrior } from './shared-steps.ts';

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
  async undo(ctx, item, prior) {
    if (!prior) return; // the delete found nothing to delete
    const source = sourceManagerOf(ctx.txn);
    if (!source || !appliedEntry(prior, source)) {
      await ctx.objects.create(restoredObject(prior), { fieldManager: committedFieldManager(ctx.txn) });
      return;
    }
    if (await ctx.objects.find(refOf(item))) throw alreadyExists(item, 'exists again since it was deleted');
    await ctx.objects.apply(restoredObject(prior), { fieldManager: source, force: true });
  },
  isUndone: holdsPrior,
};

/**
 * Patch: a server-side apply of the content, forced, as the transaction's field manager; the
 * target must exist. The undo applies the reverse patch with the same manager, so the fields the
 * patch added are released and the ones it changed get their prior values back.
 */

import { committedFieldManager, fieldManager } from '../saga/targets.ts';
import type { ChangeStrategy } from './change-strategy.ts';
import { desiredObject } from './desired.ts';
import { committed } from './results.ts';
import { carriesOurStamp, replaceWithPrior } from './shared-steps.ts';
import { patchIsUndone, reverseApply } from './undo-rules.ts';

export const patchStrategy: ChangeStrategy = {
  existence: 'present',
  dryRun: (ctx, item) =>
    ctx.objects.apply(desiredObject(ctx.txn, item), {
      dryRun: true,
      fieldManager: fieldManager(ctx.txn),
      force: true,
    }),
  async commit(ctx, item, resourceVersion) {
    const applied = await ctx.objects.apply(desiredObject(ctx.txn, item, resourceVersion), {
      fieldManager: committedFieldManager(ctx.txn),
      force: true,
    });
    return committed(applied, false);
  },
  isApplied: carriesOurStamp,
  async undo(ctx, item, prior, resourceVersion) {
    if (!prior) return replaceWithPrior(ctx, item, prior, resourceVersion);
    const reverse = reverseApply(desiredObject(ctx.txn, item), prior);
    if (resourceVersion) reverse.metadata.resourceVersion = resourceVersion;
    await ctx.objects.apply(reverse, { fieldManager: committedFieldManager(ctx.txn), force: true });
  },
  isUndone: (txn, item, prior, current) => patchIsUndone(desiredObject(txn, item), prior, current),
};

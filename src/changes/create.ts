/** Create: the target must not exist; the undo deletes what was created. */
import { committedFieldManager, fieldManager } from '../saga/targets.ts';
import type { ChangeStrategy } from './change-strategy.ts';
import { desiredToSend } from './desired.ts';
import { committed } from './results.ts';
import { carriesOurStamp, holdsPrior, replaceWithPrior } from './shared-steps.ts';

export const createStrategy: ChangeStrategy = {
  existence: 'absent',
  dryRun: async (ctx, item) =>
    ctx.objects.create(await desiredToSend(ctx, item), { dryRun: true, fieldManager: fieldManager(ctx.txn) }),
  async commit(ctx, item) {
    const created = await ctx.objects.create(await desiredToSend(ctx, item), {
      fieldManager: committedFieldManager(ctx.txn),
    });
    return committed(created, false);
  },
  isApplied: carriesOurStamp,
  undo: replaceWithPrior,
  isUndone: holdsPrior,
};

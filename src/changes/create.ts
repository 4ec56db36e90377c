/** Create: the target must not exist; the undo deletes what was created. */
import { committedFieldManager, fieldManager } from '../saga/targets.ts';
import { desiredObject } from './desired.ts';
import { committed } from './results.ts';
import { carriesOurStamp, holdsPrior, replaceWithPrior } from './shared-steps.ts';
import type { ChangeStrategy } from './strategy.ts';

export const createStrategy: ChangeStrategy = {
  existence: 'absent',
  dryRun: (ctx, item) =>
    ctx.objects.create(desiredObject(ctx.txn, item), { dryRun: true, fieldManager: fieldManager(ctx.txn) }),
  async commit(ctx, item) {
    const created = await ctx.objects.create(desiredObject(ctx.txn, item), {
      fieldManager: committedFieldManager(ctx.txn),
    });
    return committed(created, false);
  },
  isApplied: carriesOurStamp,
  undo: replaceWithPrior,
  isUndone: holdsPrior,
};

/** Update: the whole object replaced; the target must exist; the undo replaces it with its prior state. */
import { isConflict } from '../kube/errors.ts';
import { committedFieldManager, fieldManager } from '../saga/targets.ts';
import { refOf } from './change-context.ts';
import { desiredObject } from './desired.ts';
import { committed } from './results.ts';
import { carriesOurStamp, holdsPrior, replaceWithPrior } from './shared-steps.ts';
import type { ChangeStrategy } from './strategy.ts';

/** A write between our read and the dry run is not a refusal: read again, a few times. */
const DRY_RUN_ATTEMPTS = 3;

export const updateStrategy: ChangeStrategy = {
  existence: 'present',
  /**
   * Against the resourceVersion just read: a custom resource may not be replaced without one
   * (422 "must be specified for an update"), so a dry run without it refuses what the commit,
   * which carries the version read at prepare, would do.
   */
  async dryRun(ctx, item) {
    for (let attempt = 1; ; attempt++) {
      const current = await ctx.objects.get(refOf(item));
      try {
        return await ctx.objects.replace(desiredObject(ctx.txn, item, current.metadata.resourceVersion), {
          dryRun: true,
          fieldManager: fieldManager(ctx.txn),
        });
      } catch (e) {
        if (!isConflict(e) || attempt >= DRY_RUN_ATTEMPTS) throw e;
      }
    }
  },
  async commit(ctx, item, resourceVersion) {
    const replaced = await ctx.objects.replace(desiredObject(ctx.txn, item, resourceVersion), {
      fieldManager: committedFieldManager(ctx.txn),
    });
    return committed(replaced, false);
  },
  isApplied: carriesOurStamp,
  undo: replaceWithPrior,
  isUndone: holdsPrior,
};

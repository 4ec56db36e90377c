/** Update: the whole object replaced; the target must exist; the undo replaces it with its prior state. */
import { isConflict, isInvalid } from '../kube/errors.ts';
import { committedFieldManager, fieldManager } from '../saga/targets.ts';
import { refOf } from './change-context.ts';
import type { ChangeStrategy } from './change-strategy.ts';
import { desiredToSend } from './desired.ts';
import { committed } from './results.ts';
import { carriesOurStamp, holdsPrior, replaceWithPrior } from './shared-steps.ts';

/** A write between our read and the dry run is not a refusal: read again, a few times. */
const DRY_RUN_ATTEMPTS = 3;

/** The server refused a replace for want of a resourceVersion (custom resources require one). */
const needsResourceVersion = (e: unknown): boolean =>
  isInvalid(e) && (e.details?.causes ?? []).some((c) => c.field === 'metadata.resourceVersion');

export const updateStrategy: ChangeStrategy = {
  existence: 'present',
  /**
   * Unconditional first, as built-in kinds allow: no read to pay for on the common path. A
   * custom resource may not be replaced without a resourceVersion (422 "must be specified for an
   * update"), while the commit, which carries the version read at prepare, would go through: then
   * the dry run is made against the version just read.
   */
  async dryRun(ctx, item) {
    const options = { dryRun: true, fieldManager: fieldManager(ctx.txn) };
    try {
      return await ctx.objects.replace(await desiredToSend(ctx, item), options);
    } catch (e) {
      if (!needsResourceVersion(e)) throw e;
    }
    for (let attempt = 1; ; attempt++) {
      const current = await ctx.objects.get(refOf(item));
      try {
        return await ctx.objects.replace(
          await desiredToSend(ctx, item, current.metadata.resourceVersion),
          options,
        );
      } catch (e) {
        if (!isConflict(e) || attempt >= DRY_RUN_ATTEMPTS) throw e;
      }
    }
  },
  async commit(ctx, item, resourceVersion) {
    const replaced = await ctx.objects.replace(await desiredToSend(ctx, item, resourceVersion), {
      fieldManager: committedFieldManager(ctx.txn),
    });
    return committed(replaced, false);
  },
  isApplied: carriesOurStamp,
  undo: replaceWithPrior,
  isUndone: holdsPrior,
};

/**
 * What prepare concludes about one change before anything is written, in the words the
 * Transaction's status uses: the dry run's verdict, and the prior state's (a Create's target must
 * not exist, an Update's or a Patch's must). The controller's prepare stage and `janus plan` both
 * judge through these, so a plan that is green is not refused at prepare, and the reverse.
 */
import { isAlreadyExists, isNotFound, isTransient } from '../kube/errors.ts';
import type { KubeObject } from '../kube/resources.ts';
import { describeTarget } from '../saga/targets.ts';
import { type ChangeContext, type ChangeItem, describeFailure, refOf } from './change-context.ts';
import { isDecryptionRefusal } from './sops-content.ts';
import { strategyOf } from './strategy.ts';

export interface ChangeRefusal {
  reason: 'DryRunFailed' | 'TargetExists' | 'TargetNotFound' | 'ReadFailed';
  message: string;
}

export const targetExists = (item: ChangeItem): ChangeRefusal => ({
  reason: 'TargetExists',
  message: `change ${item.index}: cannot create ${describeTarget(item.target)}: it already exists`,
});

export const targetNotFound = (item: ChangeItem): ChangeRefusal => ({
  reason: 'TargetNotFound',
  message: `change ${item.index}: cannot ${item.change.type.toLowerCase()} ${describeTarget(item.target)}: it does not exist`,
});

/**
 * Dry-runs one change against the target's current state: the object as it would be, or why
 * not. A missing or present target only matters here where it makes the dry run impossible;
 * existence is judged again with the prior state (readPrior). Transient errors are thrown.
 */
export async function dryRunVerdict(
  ctx: ChangeContext,
  item: ChangeItem,
): Promise<{ planned: KubeObject | undefined } | ChangeRefusal> {
  const strategy = strategyOf(item);
  try {
    return { planned: await strategy.dryRun(ctx, item) };
  } catch (e) {
    if (isDecryptionRefusal(e))
      return { reason: 'DryRunFailed', message: describeFailure(item, 'decryption', e) };
    if (isTransient(e)) throw e;
    if (isNotFound(e) && strategy.existence === 'either') return { planned: undefined }; // already gone
    if (isNotFound(e) && strategy.existence === 'present') return targetNotFound(item);
    if (isAlreadyExists(e) && strategy.existence === 'absent') return targetExists(item);
    return { reason: 'DryRunFailed', message: describeFailure(item, 'dry run', e) };
  }
}

/** Reads a target's prior state (undefined: absent) and judges its existence. */
export async function readPrior(
  ctx: ChangeContext,
  item: ChangeItem,
): Promise<{ prior: KubeObject | undefined } | ChangeRefusal> {
  const existence = strategyOf(item).existence;
  try {
    const prior = await ctx.objects.get(refOf(item));
    if (existence === 'absent') return targetExists(item);
    return { prior };
  } catch (e) {
    if (isNotFound(e)) return existence === 'present' ? targetNotFound(item) : { prior: undefined };
    if (isTransient(e)) throw e;
    return { reason: 'ReadFailed', message: describeFailure(item, 'read', e) };
  }
}

/** Steps several change types share. */
import type { Transaction } from '../api/v1alpha1/index.ts';
import { KubeApiError } from '../kube/errors.ts';
import type { KubeObject } from '../kube/resources.ts';
import { describeTarget, isAppliedBy } from '../saga/targets.ts';
import { type ChangeContext, type ChangeItem, refOf } from './change-context.ts';
import { restoredObject } from './restore.ts';
import { sameContent } from './undo-rules.ts';

/**
 * Puts the prior state back over what the change left: the whole prior object (replaced), or,
 * when there was none, the object the change created is deleted if it is still the one created.
 */
export async function replaceWithPrior(
  ctx: ChangeContext,
  item: ChangeItem,
  prior: KubeObject | undefined,
  resourceVersion: string | undefined,
): Promise<void> {
  if (!prior) {
    await ctx.objects.delete(refOf(item), { preconditions: { resourceVersion } });
    return;
  }
  await ctx.objects.replace(restoredObject(prior, resourceVersion));
}

/** The undo wrote the whole prior object: done when the target holds its content. */
export const holdsPrior = (_txn: Transaction, _item: ChangeItem, prior: KubeObject, current: KubeObject) =>
  sameContent(prior, current);

/** A written object is ours when it carries this transaction's applied-by stamp for the change. */
export const carriesOurStamp = (txn: Transaction, item: ChangeItem, current: KubeObject | undefined) =>
  current !== undefined && isAppliedBy(current.metadata, txn, item.index);

/**
 * The refusal a create meets when its object exists, for a write that creates by server-side
 * apply (which has no must-not-exist precondition, so the object is looked for first): the
 * operations loop then judges it as it judges a create's, ours (a restart) or someone else's.
 */
export function alreadyExists(item: ChangeItem, detail: string): KubeApiError {
  const what = describeTarget(item.target);
  return new KubeApiError('PATCH', what, 409, { reason: 'AlreadyExists', message: `${what} ${detail}` });
}

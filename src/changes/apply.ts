/**
 * Apply: a source's rendered object, server-side applied whole, forced, under the source's field
 * manager (spec.sourceRef; the transaction's own without one), so that what the previous commit
 * applied and this one no longer does is removed (docs/sources.md, "The `Apply` change"). The
 * target may exist or not. The undo puts back the state before, by what it was:
 *
 * - absent: the object is deleted, if it is still the one this change left;
 * - applied before by the source's manager: that manager applies the prior values of every field
 *   it owned then (the prior object's managedFields, kept in its snapshot) or owns now (read
 *   first; managed-fields.ts), so fields this commit added are released, fields it removed come
 *   back, and one it took from another manager gets its prior value back;
 * - anyone else's (adopted): replaced whole by the prior object, as an Update's undo.
 */
import type { KubeObject } from '../kube/resources.ts';
import { committedFieldManager, fieldManager, sourceManagerOf } from '../saga/targets.ts';
import { type ChangeContext, refOf } from './change-context.ts';
import type { ChangeStrategy } from './change-strategy.ts';
import { desiredToSend } from './desired.ts';
import { appliedEntry, reappliedConfiguration } from './managed-fields.ts';
import { committed } from './results.ts';
import { alreadyExists, carriesOurStamp, holdsPrior, replaceWithPrior } from './shared-steps.ts';

type ManagedTxn = ChangeContext['txn'];

/** The manager an Apply writes under: its source's, else the transaction's own (recorded at prepare). */
export function applyFieldManager(txn: ManagedTxn, recorded: boolean): string {
  return sourceManagerOf(txn) ?? (recorded ? committedFieldManager(txn) : fieldManager(txn));
}

/** How an Apply's undo puts the prior state back (see the top of this file). */
export type ApplyUndo = 'delete' | 'reapply' | 'replace';

export function applyUndoOf(txn: ManagedTxn, prior: KubeObject | undefined): ApplyUndo {
  if (!prior) return 'delete';
  const entry = appliedEntry(prior, applyFieldManager(txn, true));
  return entry && entry.apiVersion === prior.apiVersion ? 'reapply' : 'replace';
}

export const applyStrategy: ChangeStrategy = {
  existence: 'either',
  dryRun: async (ctx, item) =>
    ctx.objects.apply(await desiredToSend(ctx, item), {
      dryRun: true,
      fieldManager: applyFieldManager(ctx.txn, false),
      force: true,
    }),
  async commit(ctx, item, resourceVersion) {
    // A server-side apply creates what is missing and has no "must not exist" precondition: an
    // object that appeared since prepare must be told apart from ours before it is applied over.
    if (!resourceVersion) {
      const current = await ctx.objects.find(refOf(item));
      if (current && carriesOurStamp(ctx.txn, item, current)) return committed(current, true);
      if (current) throw alreadyExists(item, 'did not exist at prepare and exists now');
    }
    const applied = await ctx.objects.apply(await desiredToSend(ctx, item, resourceVersion), {
      fieldManager: applyFieldManager(ctx.txn, true),
      force: true,
    });
    return committed(applied, false);
  },
  isApplied: carriesOurStamp,
  async undo(ctx, item, prior, resourceVersion) {
    if (!prior || applyUndoOf(ctx.txn, prior) !== 'reapply') {
      return replaceWithPrior(ctx, item, prior, resourceVersion);
    }
    const manager = applyFieldManager(ctx.txn, true);
    // What the manager owns now (what this change applied) decides which of its fields to release.
    const current = await ctx.objects.get(refOf(item));
    const config = reappliedConfiguration(prior, current, manager) as KubeObject;
    if (resourceVersion) config.metadata.resourceVersion = resourceVersion;
    await ctx.objects.apply(config, { fieldManager: manager, force: true });
  },
  isUndone: holdsPrior,
};

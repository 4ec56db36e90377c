/**
 * One strategy per change type (as kapp has one change type per operation): the requests that
 * make, check and undo a change of that type. The controller's stages, `janus plan` and
 * `janus recover` go through these and nothing else, so what the plan dry-runs is what the
 * controller sends. A new change type is a new strategy here plus its entry in STRATEGIES.
 */
import type { ChangeType, Transaction } from '../api/v1alpha1/index.ts';
import type { KubeObject } from '../kube/resources.ts';
import { applyStrategy } from './apply.ts';
import type { ChangeContext, ChangeItem } from './change-context.ts';
import { createStrategy } from './create.ts';
import { deleteStrategy } from './delete.ts';
import { patchStrategy } from './patch.ts';
import type { Committed } from './results.ts';
import { updateStrategy } from './update.ts';

export interface ChangeStrategy {
  /** What prepare requires of the target: it must exist, must not, or either will do. */
  readonly existence: 'present' | 'absent' | 'either';
  /**
   * Server-side dry run against the target's current state, with the desired object, verb,
   * field manager and preconditions of the commit: the object as it would be (undefined when the
   * change deletes it). Throws the API server's refusal.
   */
  dryRun(ctx: ChangeContext, item: ChangeItem): Promise<KubeObject | undefined>;
  /** The write, conditional on the resourceVersion read at prepare ('' when there was nothing). */
  commit(ctx: ChangeContext, item: ChangeItem, resourceVersion: string | undefined): Promise<Committed>;
  /** Whether `current` (undefined: absent) is what this transaction's commit of `item` left. */
  isApplied(txn: Transaction, item: ChangeItem, current: KubeObject | undefined): boolean;
  /** Puts `prior` back (undefined: there was nothing), conditional on `resourceVersion`. */
  undo(
    ctx: ChangeContext,
    item: ChangeItem,
    prior: KubeObject | undefined,
    resourceVersion: string | undefined,
  ): Promise<void>;
  /** Whether `current` already holds what the undo of the change writes back over `prior`. */
  isUndone(txn: Transaction, item: ChangeItem, prior: KubeObject, current: KubeObject): boolean;
}

const STRATEGIES: Record<ChangeType, ChangeStrategy> = {
  Create: createStrategy,
  Update: updateStrategy,
  Patch: patchStrategy,
  Delete: deleteStrategy,
  Apply: applyStrategy,
};

export function strategyOf(item: ChangeItem): ChangeStrategy {
  return STRATEGIES[item.change.type];
}

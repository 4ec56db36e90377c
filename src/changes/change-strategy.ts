/**
 * What a change type's strategy does (create.ts, update.ts, patch.ts, delete.ts): the requests
 * that make, check and undo a change of that type. In a file of its own so that the strategies
 * and the table that picks one (strategy.ts) import it without importing each other.
 */
import type { Transaction } from '../api/v1alpha1/index.ts';
import type { KubeObject } from '../kube/resources.ts';
import type { ChangeContext, ChangeItem } from './change-context.ts';
import type { Committed } from './results.ts';

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

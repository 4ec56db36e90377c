/**
 * One strategy per change type (as kapp has one change type per operation): the requests that
 * make, check and undo a change of that type. The controller's stages, `janus plan` and
 * `janus recover` go through these and nothing else, so what the plan dry-runs is what the
 * controller sends. A new change type is a new strategy here plus its entry in STRATEGIES.
 */
import type { ChangeType } from '../api/v1alpha1/index.ts';
import { applyStrategy } from './apply.ts';
import type { ChangeItem } from './change-context.ts';
import type { ChangeStrategy } from './change-strategy.ts';
import { createStrategy } from './create.ts';
import { deleteStrategy } from './delete.ts';
import { patchStrategy } from './patch.ts';
import { updateStrategy } from './update.ts';

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

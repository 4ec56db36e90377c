/**
 * Which objects a source never prunes, though its render no longer has them (docs/sources.md,
 * "The `Apply` change"): deleting a Namespace or a CustomResourceDefinition deletes everything in
 * it, which no rollback can bring back; and an object whose render said so. The Git side leaves
 * them in the cluster (no Delete change) and says so in the transaction's record; `janus plan`
 * shows the same. Pure.
 */
import { GROUP } from './transaction.ts';

/** `disabled` on a rendered object: never delete it when a later render drops it (Flux's `prune: disabled`). */
export const ANNOTATION_PRUNE = `${GROUP}/prune`;
export const PRUNE_DISABLED = 'disabled';

export type NeverPrunedReason = 'Namespace' | 'CustomResourceDefinition' | 'PruneDisabled';

/** What decides: the object's group and kind, and whether its render disabled pruning it. */
export interface PruneCandidate {
  group: string;
  kind: string;
  /** The annotations of the render that last applied it. */
  annotations?: Readonly<Record<string, string>> | undefined;
}

/** Why `obj` must never be pruned, or undefined when a source may prune it. */
export function neverPruned(obj: PruneCandidate): NeverPrunedReason | undefined {
  if (obj.group === '' && obj.kind === 'Namespace') return 'Namespace';
  if (obj.group === 'apiextensions.k8s.io' && obj.kind === 'CustomResourceDefinition') {
    return 'CustomResourceDefinition';
  }
  if (obj.annotations?.[ANNOTATION_PRUNE] === PRUNE_DISABLED) return 'PruneDisabled';
  return undefined;
}

/** The words the transaction's record and `janus plan` use for each reason. */
export const NEVER_PRUNED_TEXT: Record<NeverPrunedReason, string> = {
  Namespace: 'a Namespace is never pruned: deleting it would delete everything in it',
  CustomResourceDefinition:
    'a CustomResourceDefinition is never pruned: deleting it would delete every object of its kind',
  PruneDisabled: `its render set ${ANNOTATION_PRUNE}: ${PRUNE_DISABLED}`,
};

/**
 * What a commit's render makes of a source's transaction (docs/sources.md, "What a commit does"):
 * compared with the inventory, each object new in the render or rendered differently is an Apply,
 * each object the render no longer has is a Delete when the source prunes and may prune it, and
 * nothing at all changed is no transaction. Applies keep the render's order (the apply order the
 * renderer gives: Namespaces, CRDs, then Helm's install order); prunes come last, in the reverse
 * of the order they were applied in. Pure.
 */
import {
  ANNOTATION_PRUNE,
  type Change,
  type InventoryEntry,
  MAX_CHANGES,
  MAX_SOURCE_OBJECTS,
  NEVER_PRUNED_TEXT,
  type NeverPrunedReason,
  neverPruned,
  PRUNE_DISABLED,
} from '../api/v1alpha1/index.ts';
import type { KubeObject } from '../kube/resources.ts';
import { describeTarget, groupOf } from '../saga/targets.ts';
import { identityKey, identityOf, inventoryAfter, inventoryEntry } from './inventory.ts';

export interface RenderToCompare {
  /**
   * The rendered objects in apply order, their namespaces resolved: `metadata.namespace` set on
   * every namespaced object (the source's when the render gave none), absent on cluster-scoped ones.
   */
  objects: readonly KubeObject[];
  /** The source's inventory: what its last committed transaction left applied. */
  inventory: readonly InventoryEntry[];
  /** spec.prune: delete what the render no longer has. */
  prune: boolean;
  /** The controller's key of inventory digests (inventory.ts objectDigest). */
  digestKey: string | Uint8Array;
}

/** Why an object the render dropped stays in the cluster. */
export type LeftReason = NeverPrunedReason | 'PruneOff';

export interface LeftInCluster {
  entry: InventoryEntry;
  reason: LeftReason;
  /** For the transaction's record. */
  message: string;
}

export type RenderPlan =
  | {
      kind: 'changes';
      changes: Change[];
      /** The inventory entries of the objects applied. */
      applied: InventoryEntry[];
      pruned: InventoryEntry[];
      left: LeftInCluster[];
      /** The inventory once the transaction commits. */
      next: InventoryEntry[];
    }
  | {
      /** No object to apply or delete: no transaction; the inventory still forgets what was left. */
      kind: 'unchanged';
      left: LeftInCluster[];
      next: InventoryEntry[];
    }
  | { kind: 'refused'; reason: 'TooManyObjects' | 'TooManyChanges' | 'DuplicateObject'; message: string };

const LEFT_TEXT: Record<LeftReason, string> = {
  ...NEVER_PRUNED_TEXT,
  PruneOff: 'the source does not prune (spec.prune is false)',
};

export function changesForRender(input: RenderToCompare): RenderPlan {
  const { objects, inventory, prune, digestKey } = input;
  if (objects.length > MAX_SOURCE_OBJECTS) {
    return {
      kind: 'refused',
      reason: 'TooManyObjects',
      message: `the render has ${objects.length} objects; a source may render at most ${MAX_SOURCE_OBJECTS}`,
    };
  }
  const rendered = new Map<string, KubeObject>();
  for (const obj of objects) {
    const key = identityKey(identityOf(obj));
    if (rendered.has(key)) {
      return {
        kind: 'refused',
        reason: 'DuplicateObject',
        message: `the render has ${describeObject(obj)} twice; each object may be rendered once`,
      };
    }
    rendered.set(key, obj);
  }

  const before = new Map(inventory.map((e) => [identityKey(e), e]));
  const applied: InventoryEntry[] = [];
  const changes: Change[] = [];
  for (const obj of objects) {
    const entry = inventoryEntry(obj, digestKey);
    if (before.get(identityKey(entry))?.digest === entry.digest) continue;
    applied.push(entry);
    changes.push({
      type: 'Apply',
      target: targetOf(entry),
      content: obj as unknown as Record<string, unknown>,
    });
  }

  const pruned: InventoryEntry[] = [];
  const left: LeftInCluster[] = [];
  for (const entry of [...inventory].reverse()) {
    if (rendered.has(identityKey(entry))) continue;
    const kept: LeftReason | undefined = prune
      ? neverPruned({
          group: groupOf(entry.apiVersion),
          kind: entry.kind,
          ...(entry.pruneDisabled && { annotations: { [ANNOTATION_PRUNE]: PRUNE_DISABLED } }),
        })
      : 'PruneOff';
    if (kept) {
      left.push({
        entry,
        reason: kept,
        message: `${describeObject(entry)} is left in the cluster: ${LEFT_TEXT[kept]}`,
      });
      continue;
    }
    pruned.push(entry);
    changes.push({ type: 'Delete', target: targetOf(entry) });
  }

  const next = inventoryAfter(inventory, applied, objects.map(identityOf));
  if (changes.length === 0) return { kind: 'unchanged', left, next };
  if (changes.length > MAX_CHANGES) {
    return {
      kind: 'refused',
      reason: 'TooManyChanges',
      message: `the commit would apply ${applied.length} objects and prune ${pruned.length}: ${changes.length} changes, more than the ${MAX_CHANGES} a transaction may hold; split it over two commits (the new objects first, the removals after)`,
    };
  }
  return { kind: 'changes', changes, applied, pruned, left, next };
}

function targetOf(entry: InventoryEntry): Change['target'] {
  return {
    apiVersion: entry.apiVersion,
    kind: entry.kind,
    name: entry.name,
    ...(entry.namespace && { namespace: entry.namespace }),
  };
}

function describeObject(o: KubeObject | InventoryEntry): string {
  const identity = 'metadata' in o ? identityOf(o as KubeObject) : (o as InventoryEntry);
  return `${identity.apiVersion} ${describeTarget({ kind: identity.kind, name: identity.name, namespace: identity.namespace || undefined })}`;
}

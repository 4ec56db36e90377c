/**
 * A source's inventory (docs/sources.md, "What a commit does"): every object it applied, by
 * identity, with a digest of the rendered object, in the order it was applied. The next commit's
 * render is compared with it: an object new or with another digest is applied, one no longer
 * rendered may be pruned. Pure.
 */
import { createHmac } from 'node:crypto';
import { ANNOTATION_PRUNE, type InventoryEntry, PRUNE_DISABLED } from '../api/v1alpha1/index.ts';
import { canonicalJson, type Json } from '../changes/undo-rules.ts';
import type { KubeObject } from '../kube/resources.ts';
import { groupOf, targetKey } from '../saga/targets.ts';

/** What identifies an object across renders: its group (not version), kind, namespace and name. */
export interface ObjectIdentity {
  apiVersion: string;
  kind: string;
  /** Undefined or empty for a cluster-scoped object. */
  namespace?: string | undefined;
  name: string;
}

/** One key per object, the same for every API version of its group (as the saga's targets). */
export function identityKey(o: ObjectIdentity): string {
  return targetKey({
    apiVersion: o.apiVersion,
    group: groupOf(o.apiVersion),
    kind: o.kind,
    name: o.name,
    namespace: o.namespace || undefined,
  });
}

export function identityOf(obj: KubeObject): ObjectIdentity {
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    namespace: obj.metadata.namespace || undefined,
    name: obj.metadata.name,
  };
}

/**
 * HMAC-SHA256 of the rendered object (canonical JSON: key order does not matter) under `key`, a
 * secret only the controller holds: equal renders give equal digests, and whoever may read the
 * Source's status learns nothing of the values (a plain hash of a rendered Secret would confirm a
 * guessed password).
 */
export function objectDigest(obj: KubeObject, key: string | Uint8Array): string {
  return createHmac('sha256', key)
    .update(canonicalJson(obj as unknown as Json))
    .digest('hex');
}

/** The inventory entry of a rendered object. */
export function inventoryEntry(obj: KubeObject, key: string | Uint8Array): InventoryEntry {
  const { namespace, ...identity } = identityOf(obj);
  return {
    ...identity,
    ...(namespace && { namespace }),
    digest: objectDigest(obj, key),
    ...(obj.metadata.annotations?.[ANNOTATION_PRUNE] === PRUNE_DISABLED && { pruneDisabled: true }),
  };
}

/**
 * The digest of a whole render (its objects' identities and digests, in order): a source does not
 * try the same render twice (docs/sources.md, "Outcome").
 */
export function renderDigest(entries: readonly InventoryEntry[], key: string | Uint8Array): string {
  const lines = entries.map((e) => `${identityKey(e)} ${e.digest}`);
  return createHmac('sha256', key).update(lines.join('\n')).digest('hex');
}

/**
 * The inventory once a source's transaction committed: the previous one without what it pruned
 * or left behind (no longer rendered), with what it applied; that is, the new render's, in its
 * order. A transaction that did not commit leaves the inventory as it was.
 */
export function inventoryAfter(
  previous: readonly InventoryEntry[],
  applied: readonly InventoryEntry[],
  render: readonly ObjectIdentity[],
): InventoryEntry[] {
  const byKey = new Map(previous.map((e) => [identityKey(e), e]));
  for (const e of applied) byKey.set(identityKey(e), e);
  return render.flatMap((o) => {
    const entry = byKey.get(identityKey(o));
    return entry ? [entry] : [];
  });
}

/**
 * The key of a repository's inventory digests, derived from the key that stamps its Transactions
 * (the Git cursor's, src/gitops/state.ts): one secret the controller already keeps in its own
 * namespace, which no tenant reads, used for two purposes kept apart. A lost cursor costs a new
 * key: every digest then differs once, and the next commit of each source applies all its objects
 * again (unchanged server-side applies); identities, and so pruning, are not affected.
 */
export function inventoryDigestKey(stampKey: string): Buffer {
  return createHmac('sha256', stampKey).update('janus source inventory digests').digest();
}

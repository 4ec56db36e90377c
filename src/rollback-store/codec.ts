/**
 * How prior states are laid out in rollback-store objects. Pure.
 *
 * Each snapshot is one JSON value under the key `item-<index>`; a snapshot larger than one object
 * allows is split into `item-<index>.part-<k>` keys across several objects. Snapshots of Secrets
 * go to Secret objects only, so secret data never lands in a ConfigMap. The first ConfigMap holds
 * `index.json`, which says where every snapshot is.
 */
import { createHash } from 'node:crypto';
import { MAX_CHANGES } from '../api/v1alpha1/index.ts';
import type { KubeObject } from '../kube/resources.ts';
import { viewMayRead } from './view-readable.ts';

export interface Snapshot {
  index: number;
  /** The object before the transaction touched it; undefined when it did not exist. */
  prior: KubeObject | undefined;
}

export type StoreKind = 'ConfigMap' | 'Secret';

interface Placement {
  kind: StoreKind;
  /** Objects (by ordinal among objects of that kind) holding the parts, in order. */
  parts: number[];
}

export interface StoreIndex {
  version: 1;
  configMaps: number;
  secrets: number;
  items: Record<string, Placement>;
}

/** What to write: the data of each ConfigMap and Secret, by ordinal. */
export interface EncodedStore {
  configMaps: Record<string, string>[];
  secrets: Record<string, string>[];
}

/**
 * Budget for the values of one object: the API server caps an object at 1 MiB (etcd's request
 * limit is a little above), leaving room for metadata and keys.
 */
export const OBJECT_BUDGET_BYTES = 900 * 1024;
export const INDEX_KEY = 'index.json';

/**
 * Where a prior state may be kept so it is never readable by more people than its source. A
 * ConfigMap in the transaction's namespace is readable with the `view` role there, so it holds
 * only objects of that same namespace of a kind the built-in `view` role may read anyway (see
 * view-readable.ts). Everything else goes to a Secret, which only those who may read the
 * namespace's Secrets see (in stock RBAC: those who can already run pods as its ServiceAccounts,
 * and so read what the transaction's ServiceAccount read): Secrets, RBAC objects, custom
 * resources, Leases, Transactions, any kind not on the list, targets in other namespaces and
 * cluster-scoped ones. The index records where each went, so a reader finds a prior state
 * wherever it was written, stores written under an older rule included.
 */
export function storeKindFor(prior: KubeObject | undefined, namespace: string): StoreKind {
  if (!prior) return 'ConfigMap'; // "did not exist" reveals nothing the target's name does not
  const viewable = viewMayRead(prior.apiVersion, prior.kind) && prior.metadata.namespace === namespace;
  return viewable ? 'ConfigMap' : 'Secret';
}

export function encodeStore(
  snapshots: readonly Snapshot[],
  namespace: string,
  budget = OBJECT_BUDGET_BYTES,
): EncodedStore {
  const out: EncodedStore = { configMaps: [{}], secrets: [] };
  const used = { ConfigMap: [0], Secret: [] as number[] };
  const index: StoreIndex = { version: 1, configMaps: 0, secrets: 0, items: {} };
  // The index itself lives in the first ConfigMap; reserve room for it.
  used.ConfigMap[0] = 64 * 1024;

  // Secret values are stored base64-encoded: a third larger.
  const limitOf = (kind: StoreKind) => (kind === 'Secret' ? Math.floor((budget * 3) / 4) : budget);
  const place = (kind: StoreKind, key: string, value: string): number => {
    const objects = kind === 'ConfigMap' ? out.configMaps : out.secrets;
    const sizes = used[kind];
    const size = Buffer.byteLength(key) + Buffer.byteLength(value);
    let slot = sizes.findIndex((used) => used + size <= limitOf(kind));
    if (slot < 0) {
      objects.push({});
      sizes.push(0);
      slot = objects.length - 1;
    }
    (objects[slot] as Record<string, string>)[key] = value;
    sizes[slot] = (sizes[slot] ?? 0) + size;
    return slot;
  };

  for (const snapshot of snapshots) {
    const kind = storeKindFor(snapshot.prior, namespace);
    const json = JSON.stringify(snapshot.prior ?? null);
    const chunk = limitOf(kind) - 1024;
    const pieces = Buffer.byteLength(json) <= chunk ? [json] : splitString(json, chunk);
    const parts = pieces.map((piece, k) =>
      place(kind, pieces.length === 1 ? `item-${snapshot.index}` : `item-${snapshot.index}.part-${k}`, piece),
    );
    index.items[String(snapshot.index)] = { kind, parts };
  }
  index.configMaps = out.configMaps.length;
  index.secrets = out.secrets.length;
  const indexJson = JSON.stringify(index);
  if (indexJson.length > 64 * 1024) throw new Error('rollback store index exceeds 64 KiB');
  (out.configMaps[0] as Record<string, string>)[INDEX_KEY] = indexJson;
  return out;
}

/** Splits into pieces of at most `bytes` UTF-8 bytes, never inside a character. */
function splitString(s: string, bytes: number): string[] {
  const out: string[] = [];
  let piece = '';
  let size = 0;
  for (const ch of s) {
    const n = Buffer.byteLength(ch);
    if (size + n > bytes) {
      out.push(piece);
      piece = '';
      size = 0;
    }
    piece += ch;
    size += n;
  }
  if (piece) out.push(piece);
  return out;
}

/** What encodeStore writes at most: the index is refused past it, before it is parsed. */
export const MAX_INDEX_BYTES = 64 * 1024;
/**
 * The most objects one snapshot may be split across. A prior state is one object, at most
 * 1.5 MiB in etcd; its JSON can be up to 6 times that (a value of control characters, each
 * escaped as \u0001), over chunks of at least 674 KiB (a Secret's): 14 parts. Real stores use 1
 * or 2.
 */
export const MAX_PARTS_PER_SNAPSHOT = 16;
/** Objects of one kind a store may have: every change's snapshot at its largest. */
export const MAX_STORE_OBJECTS = MAX_CHANGES * MAX_PARTS_PER_SNAPSHOT;

/** The store's index is not one encodeStore could have written; nothing it names was read. */
export class StoreIndexError extends Error {
  override readonly name = 'StoreIndexError';

  constructor(problem: string) {
    super(`the rollback store's ${INDEX_KEY} is not valid: ${problem}`);
  }
}

/**
 * The index of a store, checked to be one a transaction of at most MAX_CHANGES changes could
 * have: whoever may write ConfigMaps beside a Transaction can edit it, and an index naming a
 * million parts would otherwise have the controller fetch and hold a million objects.
 */
export function decodeIndex(first: Record<string, string> | undefined): StoreIndex {
  const raw = first?.[INDEX_KEY];
  if (!raw) throw new Error(`rollback store has no ${INDEX_KEY}`);
  if (raw.length > MAX_INDEX_BYTES)
    throw new StoreIndexError(`it is ${raw.length} bytes; an index takes at most ${MAX_INDEX_BYTES}`);
  let index: unknown;
  try {
    index = JSON.parse(raw);
  } catch {
    throw new StoreIndexError('it is not JSON');
  }
  const problem = indexProblem(index);
  if (problem) throw new StoreIndexError(problem);
  return index as StoreIndex;
}

function indexProblem(index: unknown): string | undefined {
  const i = index as Partial<StoreIndex> | null;
  if (typeof i !== 'object' || i === null || i.version !== 1) return 'it is not a version 1 index';
  for (const kind of ['configMaps', 'secrets'] as const) {
    const count = i[kind];
    if (!Number.isInteger(count) || (count as number) < 0 || (count as number) > MAX_STORE_OBJECTS)
      return `${kind} must be a count of at most ${MAX_STORE_OBJECTS} objects`;
  }
  const items = Object.entries(i.items ?? {});
  if (typeof i.items !== 'object' || items.length > MAX_CHANGES)
    return `it must name at most ${MAX_CHANGES} snapshots, one per change`;
  for (const [key, placement] of items) {
    const problem = placementProblem(key, placement, i as StoreIndex);
    if (problem) return problem;
  }
  return undefined;
}

function placementProblem(key: string, placement: unknown, index: StoreIndex): string | undefined {
  if (!/^\d+$/.test(key) || Number(key) >= MAX_CHANGES) return `snapshot "${key}" is not a change index`;
  const { kind, parts } = (placement ?? {}) as Partial<Placement>;
  if (kind !== 'ConfigMap' && kind !== 'Secret') return `snapshot ${key} names no ConfigMap or Secret`;
  const count = kind === 'ConfigMap' ? index.configMaps : index.secrets;
  if (!Array.isArray(parts) || parts.length === 0 || parts.length > MAX_PARTS_PER_SNAPSHOT)
    return `snapshot ${key} names ${Array.isArray(parts) ? parts.length : 'no'} parts; a snapshot has 1 to ${MAX_PARTS_PER_SNAPSHOT}`;
  if (!parts.every((p) => Number.isInteger(p) && p >= 0 && p < count))
    return `snapshot ${key} names a ${kind} beyond the store's ${count}`;
  return undefined;
}

/** Reads one snapshot, given the data of the objects it was placed in. */
export function decodeSnapshot(
  index: StoreIndex,
  itemIndex: number,
  dataOf: (kind: StoreKind, ordinal: number) => Record<string, string> | undefined,
): Snapshot {
  const placement = index.items[String(itemIndex)];
  if (!placement) throw new Error(`rollback store has no snapshot for change ${itemIndex}`);
  const single = placement.parts.length === 1;
  const json = placement.parts
    .map((ordinal, k) => {
      const key = single ? `item-${itemIndex}` : `item-${itemIndex}.part-${k}`;
      const value = dataOf(placement.kind, ordinal)?.[key];
      if (value === undefined)
        throw new Error(`rollback store is missing ${key} (${placement.kind} #${ordinal})`);
      return value;
    })
    .join('');
  const prior = JSON.parse(json) as KubeObject | null;
  return { index: itemIndex, prior: prior ?? undefined };
}

/** Object name for the ordinal-th ConfigMap or Secret of a transaction's store. */
export function storeObjectName(txnName: string, ordinal: number): string {
  return ordinal === 0 ? `${txnName}-rollback` : `${txnName}-rollback-${ordinal}`;
}

/**
 * Drops what a snapshot never needs, to keep stores and transfers small: every managedFields
 * entry but those of `keptManager`, the manager whose earlier applies the undo of a source's
 * Apply change puts back (src/changes/managed-fields.ts).
 */
export function compactPrior(obj: KubeObject, keptManager?: string): KubeObject {
  const { managedFields, ...metadata } = obj.metadata;
  const kept = keptManager
    ? (managedFields ?? []).filter((e) => (e as { manager?: unknown }).manager === keptManager)
    : [];
  return { ...obj, metadata: kept.length > 0 ? { ...metadata, managedFields: kept } : metadata };
}

/**
 * The fingerprint of a prior state, recorded in the Transaction's status at prepare (which only
 * the controller may write), so a rollback notices a store edited since: whoever may write
 * ConfigMaps or Secrets beside the Transaction must not choose what its ServiceAccount restores.
 */
export function snapshotDigest(prior: KubeObject | undefined): string {
  return createHash('sha256')
    .update(JSON.stringify(prior ?? null))
    .digest('hex');
}

/** What a snapshot must be: of the change's own target, and unchanged since prepare. */
export interface SnapshotExpectation {
  target: { apiVersion: string; kind: string; name: string; namespace?: string | undefined };
  /** Absent for transactions prepared before digests were recorded. */
  digest?: string | undefined;
}

/** Why a snapshot read back from the store must not be restored, if it must not. */
export function snapshotProblem(
  prior: KubeObject | undefined,
  expected: SnapshotExpectation,
): string | undefined {
  if (expected.digest !== undefined && snapshotDigest(prior) !== expected.digest) {
    return 'it was modified in the rollback store after prepare';
  }
  const t = expected.target;
  if (
    prior &&
    (prior.apiVersion !== t.apiVersion ||
      prior.kind !== t.kind ||
      prior.metadata.name !== t.name ||
      (prior.metadata.namespace || undefined) !== (t.namespace || undefined))
  ) {
    return `the rollback store holds another object (${prior.kind} ${prior.metadata.namespace ?? ''}/${prior.metadata.name})`;
  }
  return undefined;
}

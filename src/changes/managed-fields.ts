/**
 * What a field manager owns of an object, read from its `metadata.managedFields` (FieldsV1, the
 * set structured-merge-diff writes): the undo of a source's Apply puts back exactly what the
 * source's manager had applied before the transaction, so the fields this commit added are
 * released and the ones it removed come back. Pure.
 *
 * FieldsV1 keys: `f:<name>` a field of a map or struct; `k:<json>` the item of a keyed list whose
 * key fields are those of the JSON object; `v:<json>` the item of a set (a list of scalars) equal
 * to the JSON value; `i:<n>` the n-th item of a list; `.` the item or map itself. A key whose set
 * is empty owns the whole value below it (a scalar, or an atomic list, map or struct).
 */
import type { KubeObject } from '../kube/resources.ts';
import { deepEqual } from './undo-rules.ts';

export type FieldSet = { readonly [key: string]: FieldSet };

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  fieldsType?: string;
  fieldsV1?: FieldSet;
  subresource?: string;
  time?: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The entry of `manager`'s server-side applies to the object itself (not a subresource), if any. */
export function appliedEntry(obj: KubeObject, manager: string): ManagedFieldsEntry | undefined {
  const entries = (obj.metadata.managedFields ?? []) as ManagedFieldsEntry[];
  return entries.find(
    (e) =>
      e.manager === manager &&
      e.operation === 'Apply' &&
      !e.subresource &&
      e.fieldsType === 'FieldsV1' &&
      isObject(e.fieldsV1),
  );
}

/**
 * The apply configuration with which `manager` puts back what it had applied to `prior`, now that
 * `current` holds what it applied since: the values `prior` has for every field the manager owned
 * then or owns now. Fields it owned only now and `prior` lacks are left out, so the apply
 * releases them and the server removes them; fields it owned then come back, with their values;
 * fields it took from another manager since (a replica count an autoscaler had set) get their
 * prior values back instead of being released. Undefined when `prior` has no Apply entry of the
 * manager, or one recorded in another API version than `prior` was read in (its field paths may
 * differ there): the manager did not apply the object before.
 */
export function reappliedConfiguration(
  prior: KubeObject,
  current: KubeObject,
  manager: string,
): KubeObject | undefined {
  const before = appliedEntry(prior, manager);
  if (!before?.fieldsV1 || before.apiVersion !== prior.apiVersion) return undefined;
  const now = appliedEntry(current, manager);
  const fields =
    now?.fieldsV1 && now.apiVersion === prior.apiVersion
      ? unionOf(before.fieldsV1, now.fieldsV1)
      : before.fieldsV1;
  return configurationOf(prior, fields);
}

/** The values of `obj` at `fields`, with the object's identity: an apply configuration. */
export function configurationOf(obj: KubeObject, fields: FieldSet): KubeObject {
  const owned = ownedFields(obj as unknown as Json, fields);
  const {
    apiVersion: _a,
    kind: _k,
    status: _status,
    metadata: ownedMeta,
    ...rest
  } = isObject(owned) ? owned : ({} as JsonObject);
  return {
    ...rest,
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: {
      ...(isObject(ownedMeta) ? ownedMeta : {}),
      name: obj.metadata.name,
      ...(obj.metadata.namespace && { namespace: obj.metadata.namespace }),
    },
  };
}

/** Every field either set names. */
export function unionOf(a: FieldSet, b: FieldSet): FieldSet {
  const out: { [key: string]: FieldSet } = { ...a };
  for (const [key, child] of Object.entries(b)) {
    const mine = out[key];
    // An empty set owns the whole value: it stays whole whatever the other names below it.
    if (mine === undefined) out[key] = child;
    else if (Object.keys(mine).length > 0 && Object.keys(child).length > 0) out[key] = unionOf(mine, child);
    else out[key] = {};
  }
  return out;
}

/** The part of `value` that `fields` owns; undefined when it owns nothing that is there. */
export function ownedFields(value: Json | undefined, fields: FieldSet): Json | undefined {
  if (value === undefined) return undefined;
  const keys = Object.keys(fields).filter((k) => k !== '.');
  if (keys.length === 0) {
    // `{}` owns the whole value; `{".": {}}` only the map or item being there.
    if (!('.' in fields)) return value;
    if (isObject(value)) return {};
    return Array.isArray(value) ? [] : value;
  }
  if (Array.isArray(value)) return ownedItems(value, fields, keys);
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const key of keys) {
    if (!key.startsWith('f:')) continue;
    const name = key.slice(2);
    const owned = ownedFields(value[name], fields[key] as FieldSet);
    if (owned !== undefined) out[name] = owned;
  }
  return out;
}

/** The items of a list the set owns, in the list's order. */
function ownedItems(list: Json[], fields: FieldSet, keys: readonly string[]): Json[] {
  const owned = new Map<number, Json>();
  for (const key of keys) {
    const child = fields[key] as FieldSet;
    const index = itemIndex(list, key);
    if (index === undefined) continue;
    const item = list[index] as Json;
    if (key.startsWith('v:')) {
      owned.set(index, item);
      continue;
    }
    const part = ownedFields(item, child);
    if (part === undefined) continue;
    // An item is found again by its key fields: keep them even where the set does not name them.
    const keyFields = key.startsWith('k:') ? parseKey(key) : undefined;
    owned.set(index, isObject(part) && isObject(keyFields) ? { ...keyFields, ...part } : part);
  }
  return [...owned.entries()].sort(([a], [b]) => a - b).map(([, item]) => item);
}

function itemIndex(list: readonly Json[], key: string): number | undefined {
  if (key.startsWith('i:')) {
    const n = Number(key.slice(2));
    return Number.isInteger(n) && n >= 0 && n < list.length ? n : undefined;
  }
  const wanted = parseKey(key);
  if (wanted === undefined) return undefined;
  if (key.startsWith('v:')) {
    const i = list.findIndex((item) => deepEqual(item, wanted));
    return i < 0 ? undefined : i;
  }
  if (!key.startsWith('k:') || !isObject(wanted)) return undefined;
  const i = list.findIndex(
    (item) => isObject(item) && Object.entries(wanted).every(([k, v]) => deepEqual(item[k], v)),
  );
  return i < 0 ? undefined : i;
}

function parseKey(key: string): Json | undefined {
  try {
    return JSON.parse(key.slice(2)) as Json;
  } catch {
    return undefined;
  }
}

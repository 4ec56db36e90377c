/** Pure rules for undoing a change: what to send back, and how to recognise that it was sent. */
import { createHash } from 'node:crypto';
import type { KubeObject } from '../kube/resources.ts';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Metadata the API server sets; it is removed before an object is written back. */
const SERVER_SET_METADATA = [
  'resourceVersion',
  'uid',
  'creationTimestamp',
  'generation',
  'managedFields',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'selfLink',
] as const;

/** The prior object, ready to be created or replaced: server-set metadata and status removed. */
export function cleanForRestore(prior: KubeObject): KubeObject {
  const metadata = { ...prior.metadata };
  for (const key of SERVER_SET_METADATA) delete metadata[key];
  const { status: _status, ...rest } = prior;
  return { ...rest, metadata };
}

/**
 * The apply configuration that undoes a server-side-apply Patch when sent by the same field
 * manager: for every field the patch set, the prior value if there was one; fields the patch
 * added are left out, so the manager's ownership of them ends and the server removes them.
 * Lists are atomic, as in the apply configuration itself.
 */
export function reversePatch(forward: JsonObject, prior: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(forward)) {
    if (!(key in prior)) continue;
    const before = prior[key] as Json;
    if (isObject(value) && isObject(before)) {
      const nested = reversePatch(value, before);
      if (Object.keys(nested).length > 0) out[key] = nested;
    } else {
      out[key] = before;
    }
  }
  return out;
}

/** Builds the full reverse apply body for a target, with identity fields set. */
export function reverseApply(forward: KubeObject, prior: KubeObject): KubeObject {
  const {
    apiVersion: _a,
    kind: _k,
    metadata: forwardMeta,
    ...forwardRest
  } = forward as unknown as JsonObject;
  const { apiVersion: _pa, kind: _pk, metadata: priorMeta, ...priorRest } = prior as unknown as JsonObject;
  const metaPatch = reversePatch(
    pick(forwardMeta, ['labels', 'annotations']),
    pick(priorMeta, ['labels', 'annotations']),
  );
  return {
    ...(reversePatch(forwardRest, priorRest) as Record<string, unknown>),
    apiVersion: forward.apiVersion,
    kind: forward.kind,
    metadata: {
      ...(metaPatch as Record<string, unknown>),
      name: prior.metadata.name,
      ...(prior.metadata.namespace && { namespace: prior.metadata.namespace }),
    },
  };
}

function pick(v: Json | undefined, keys: string[]): JsonObject {
  const out: JsonObject = {};
  if (!isObject(v)) return out;
  for (const k of keys) if (k in v) out[k] = v[k] as Json;
  return out;
}

/** True when every field the forward patch set holds its prior value (or is absent, as before). */
export function patchIsUndone(forward: KubeObject, prior: KubeObject, current: KubeObject): boolean {
  const check = (f: Json, p: Json | undefined, c: Json | undefined): boolean => {
    if (isObject(f)) {
      return Object.entries(f).every(([k, v]) =>
        check(v, isObject(p) ? p[k] : undefined, isObject(c) ? c[k] : undefined),
      );
    }
    return deepEqual(p, c);
  };
  const { apiVersion: _a, kind: _k, metadata: fm, ...fRest } = forward as unknown as JsonObject;
  const f: JsonObject = { ...fRest, metadata: pick(fm, ['labels', 'annotations']) };
  return check(f, prior as unknown as Json, current as unknown as Json);
}

/**
 * True when `current` has the content of `prior` (both cleaned): used to recognise a restore or
 * a re-creation this transaction already made before a restart.
 */
export function sameContent(prior: KubeObject, current: KubeObject): boolean {
  return deepEqual(userContent(prior), userContent(current));
}

/**
 * Annotations a workload's own controller writes on it (the Deployment controller's revision):
 * bookkeeping that follows every rollout, not a change someone else made.
 */
const CONTROLLER_ANNOTATION_PREFIXES = ['deployment.kubernetes.io/'] as const;

/**
 * What a writer of the object decides: everything but status, server-set metadata and the
 * annotations its controller keeps. A controller's status write leaves it unchanged.
 */
function userContent(obj: KubeObject): JsonObject {
  const c = cleanForRestore(obj) as unknown as JsonObject;
  const meta = pick(c.metadata, ['name', 'namespace', 'labels', 'annotations']);
  if (isObject(meta.annotations)) {
    const kept = Object.entries(meta.annotations).filter(
      ([key]) => !CONTROLLER_ANNOTATION_PREFIXES.some((prefix) => key.startsWith(prefix)),
    );
    if (kept.length > 0) meta.annotations = Object.fromEntries(kept);
    else delete meta.annotations;
  }
  return { ...c, metadata: meta };
}

/**
 * SHA-256 of an object's user content (keys sorted): recorded at commit, it tells at rollback
 * whether a newer resourceVersion is only a controller's status write (same fingerprint) or a
 * change someone else made (a different one).
 */
export function contentFingerprint(obj: KubeObject): string {
  return createHash('sha256')
    .update(canonicalJson(userContent(obj)))
    .digest('hex');
}

/** JSON with every object's keys sorted: equal values give equal text, whatever their key order. */
export function canonicalJson(v: Json): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k] as Json)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

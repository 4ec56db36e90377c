/**
 * The informer's store: objects by key, and the change each write means for handlers. Pure (no
 * I/O), so the relist diff that recovers from a 410 is tested without a cluster.
 */
import type { KubeObject } from '../kube/resources.ts';

/** `namespace/name`, or `name` for cluster-scoped objects (client-go's MetaNamespaceKeyFunc). */
export function objectKey(obj: Pick<KubeObject, 'metadata'>): string {
  const { namespace, name } = obj.metadata;
  return namespace ? `${namespace}/${name}` : name;
}

/** The inverse of objectKey. */
export function splitKey(key: string): { namespace: string | undefined; name: string } {
  const slash = key.indexOf('/');
  return slash < 0
    ? { namespace: undefined, name: key }
    : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

export type CacheChange<T> =
  | { type: 'add'; key: string; obj: T }
  | { type: 'update'; key: string; old: T; obj: T }
  | { type: 'delete'; key: string; obj: T };

export class ObjectCache<T extends KubeObject> {
  readonly #objects = new Map<string, T>();

  get size(): number {
    return this.#objects.size;
  }

  get(key: string): T | undefined {
    return this.#objects.get(key);
  }

  keys(): string[] {
    return [...this.#objects.keys()];
  }

  list(): T[] {
    return [...this.#objects.values()];
  }

  /**
   * Stores `obj`. No change when the cached copy has the same resourceVersion: resourceVersions
   * are opaque, but equal ones name the same write (a replayed event, an unchanged relist item).
   */
  upsert(obj: T): CacheChange<T> | undefined {
    const key = objectKey(obj);
    const old = this.#objects.get(key);
    if (old && sameVersion(old, obj)) return undefined;
    this.#objects.set(key, obj);
    return old ? { type: 'update', key, old, obj } : { type: 'add', key, obj };
  }

  /**
   * Stores `obj` unless the cached copy is newer. resourceVersions are opaque in general; the
   * API server's are etcd revisions, increasing integers, and only those are compared here.
   */
  upsertNewer(obj: T): CacheChange<T> | undefined {
    const old = this.#objects.get(objectKey(obj));
    if (old && isNewer(old, obj)) return undefined;
    return this.upsert(obj);
  }

  /** Drops `obj`'s key; `obj` is the final state from the DELETED event, reported even if uncached. */
  remove(obj: T): CacheChange<T> {
    const key = objectKey(obj);
    this.#objects.delete(key);
    return { type: 'delete', key, obj };
  }

  /**
   * Replaces the whole content with a fresh LIST: adds, updates for changed objects, and deletes
   * (with the last known state) for objects that vanished while we were not watching.
   */
  replace(listed: readonly T[]): CacheChange<T>[] {
    const changes: CacheChange<T>[] = [];
    const seen = new Set<string>();
    for (const obj of listed) {
      seen.add(objectKey(obj));
      const change = this.upsert(obj);
      if (change) changes.push(change);
    }
    for (const [key, obj] of this.#objects) {
      if (seen.has(key)) continue;
      this.#objects.delete(key);
      changes.push({ type: 'delete', key, obj });
    }
    return changes;
  }
}

/** `a` was written after `b`, as far as their resourceVersions (decimal integers) say. */
export function isNewer(a: KubeObject, b: KubeObject): boolean {
  const [ra, rb] = [a.metadata.resourceVersion, b.metadata.resourceVersion];
  if (!ra || !rb || !/^\d+$/.test(ra) || !/^\d+$/.test(rb)) return false;
  return BigInt(ra) > BigInt(rb);
}

function sameVersion(a: KubeObject, b: KubeObject): boolean {
  const rv = a.metadata.resourceVersion;
  return rv !== undefined && rv === b.metadata.resourceVersion;
}

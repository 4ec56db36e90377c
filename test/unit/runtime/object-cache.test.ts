import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { isNewer, ObjectCache, objectKey, splitKey } from '../../../src/runtime/object-cache.ts';

/** A ConfigMap in namespace `ns`, or a cluster-scoped object when namespace is null. */
function cm(name: string, resourceVersion: string, namespace: string | null = 'ns'): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, resourceVersion, ...(namespace && { namespace }) },
  };
}

describe('object keys', () => {
  it('are namespace/name, or name for cluster-scoped objects, and split back', () => {
    expect(objectKey(cm('a', '1'))).toBe('ns/a');
    expect(objectKey(cm('node-1', '1', null))).toBe('node-1');
    expect(splitKey('ns/a')).toEqual({ namespace: 'ns', name: 'a' });
    expect(splitKey('node-1')).toEqual({ namespace: undefined, name: 'node-1' });
  });
});

describe('ObjectCache', () => {
  it('reports an add, then an update with the old state, and ignores a replay of the same version', () => {
    const cache = new ObjectCache();
    const v1 = cm('a', '1');
    const v2 = cm('a', '2');

    expect(cache.upsert(v1)).toEqual({ type: 'add', key: 'ns/a', obj: v1 });
    expect(cache.upsert(v2)).toEqual({ type: 'update', key: 'ns/a', old: v1, obj: v2 });
    expect(cache.upsert(cm('a', '2'))).toBeUndefined();
    expect(cache.get('ns/a')).toBe(v2);
  });

  it('reports a delete with the final state even for an uncached object', () => {
    const cache = new ObjectCache();
    cache.upsert(cm('a', '1'));
    const gone = cm('a', '3');

    expect(cache.remove(gone)).toEqual({ type: 'delete', key: 'ns/a', obj: gone });
    expect(cache.remove(cm('never', '4'))).toMatchObject({ type: 'delete', key: 'ns/never' });
    expect(cache.size).toBe(0);
  });

  it('replace() reports what a relist found: adds, changed objects and vanished ones', () => {
    const cache = new ObjectCache();
    const kept = cm('kept', '1');
    const changedOld = cm('changed', '2');
    const vanished = cm('vanished', '3');
    for (const obj of [kept, changedOld, vanished]) cache.upsert(obj);
    const changedNew = cm('changed', '7');
    const added = cm('added', '8');

    const changes = cache.replace([cm('kept', '1'), changedNew, added]);

    expect(changes).toEqual([
      { type: 'update', key: 'ns/changed', old: changedOld, obj: changedNew },
      { type: 'add', key: 'ns/added', obj: added },
      { type: 'delete', key: 'ns/vanished', obj: vanished },
    ]);
    expect(cache.keys().sort()).toEqual(['ns/added', 'ns/changed', 'ns/kept']);
    expect(cache.get('ns/kept')).toBe(kept);
  });

  it('replace() with an empty list deletes everything', () => {
    const cache = new ObjectCache();
    cache.upsert(cm('a', '1'));
    cache.upsert(cm('b', '2'));

    expect(cache.replace([]).map((c) => `${c.type} ${c.key}`)).toEqual(['delete ns/a', 'delete ns/b']);
    expect(cache.list()).toEqual([]);
  });

  it('upsertNewer() never goes back to an older state (a seed LIST ahead of the watch)', () => {
    const cache = new ObjectCache();
    const listed = cm('a', '120');
    cache.upsertNewer(listed);

    expect(cache.upsertNewer(cm('a', '100'))).toBeUndefined(); // the watch catching up
    expect(cache.get('ns/a')).toBe(listed);
    expect(cache.upsertNewer(cm('a', '121'))).toMatchObject({ type: 'update', old: listed });
    expect(isNewer(cm('a', '10'), cm('a', '9'))).toBe(true); // as numbers, not strings
    expect(isNewer(cm('a', 'x2'), cm('a', 'x1'))).toBe(false); // not etcd's: not compared
  });
});

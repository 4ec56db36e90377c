/** A source's inventory: identities, digests, and what it becomes once a transaction commits. */
import { describe, expect, it } from 'vitest';
import type { InventoryEntry } from '../../../src/api/v1alpha1/index.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import {
  identityKey,
  identityOf,
  inventoryAfter,
  inventoryEntry,
  objectDigest,
  renderDigest,
} from '../../../src/sources/inventory.ts';

const KEY = 'the controller key';
const cm = (name: string, data: Record<string, string>, namespace = 'shop'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data,
});

describe('identityKey', () => {
  it('is the same for every version of a group, and differs by kind, namespace and name', () => {
    const hpa = (apiVersion: string) => ({
      apiVersion,
      kind: 'HorizontalPodAutoscaler',
      namespace: 'shop',
      name: 'web',
    });
    expect(identityKey(hpa('autoscaling/v1'))).toBe(identityKey(hpa('autoscaling/v2')));
    expect(identityKey(hpa('autoscaling/v2'))).not.toBe(
      identityKey({ ...hpa('autoscaling/v2'), namespace: 'other' }),
    );
    expect(identityKey({ apiVersion: 'v1', kind: 'Namespace', name: 'shop' })).toBe(
      identityKey({ apiVersion: 'v1', kind: 'Namespace', name: 'shop', namespace: '' }),
    );
  });
});

describe('objectDigest', () => {
  it('is the same whatever the order of keys, and changes with any value', () => {
    const a = cm('web', { a: '1', b: '2' });
    const reordered = {
      data: { b: '2', a: '1' },
      metadata: { namespace: 'shop', name: 'web' },
      kind: 'ConfigMap',
      apiVersion: 'v1',
    };
    expect(objectDigest(a, KEY)).toBe(objectDigest(reordered as KubeObject, KEY));
    expect(objectDigest(a, KEY)).not.toBe(objectDigest(cm('web', { a: '1', b: '3' }), KEY));
    expect(objectDigest(a, KEY)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('depends on the key: without it a digest confirms no guess of a value', () => {
    expect(objectDigest(cm('web', { pin: '1234' }), KEY)).not.toBe(
      objectDigest(cm('web', { pin: '1234' }), 'another'),
    );
  });
});

describe('inventoryEntry', () => {
  it("records the identity, the digest, and a render's tx.janus.io/prune: disabled", () => {
    const kept = cm('web', {});
    kept.metadata.annotations = { 'tx.janus.io/prune': 'disabled' };
    expect(inventoryEntry(kept, KEY)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'shop',
      name: 'web',
      digest: objectDigest(kept, KEY),
      pruneDisabled: true,
    });
    const namespace = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } };
    expect(inventoryEntry(namespace, KEY)).not.toHaveProperty('namespace');
    expect(inventoryEntry(namespace, KEY)).not.toHaveProperty('pruneDisabled');
  });
});

describe('inventoryAfter', () => {
  const entry = (obj: KubeObject): InventoryEntry => inventoryEntry(obj, KEY);

  it('is the old one without what the render dropped, with what was applied, in the render’s order', () => {
    const kept = cm('kept', { v: '1' });
    const changedBefore = cm('changed', { v: '1' });
    const changedNow = cm('changed', { v: '2' });
    const added = cm('added', { v: '1' });
    const dropped = cm('dropped', { v: '1' });
    const previous = [entry(dropped), entry(changedBefore), entry(kept)];
    const render = [added, kept, changedNow];
    expect(inventoryAfter(previous, [entry(added), entry(changedNow)], render.map(identityOf))).toEqual([
      entry(added),
      entry(kept),
      entry(changedNow),
    ]);
  });
});

describe('renderDigest', () => {
  it('changes with an object, and with the order of the render', () => {
    const a = inventoryEntry(cm('a', {}), KEY);
    const b = inventoryEntry(cm('b', {}), KEY);
    expect(renderDigest([a, b], KEY)).toBe(renderDigest([a, b], KEY));
    expect(renderDigest([a, b], KEY)).not.toBe(renderDigest([b, a], KEY));
    expect(renderDigest([a, b], KEY)).not.toBe(
      renderDigest([a, inventoryEntry(cm('b', { v: '1' }), KEY)], KEY),
    );
  });
});

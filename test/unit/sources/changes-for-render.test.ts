/**
 * A commit's render compared with the source's inventory: the Apply and Delete changes of its
 * transaction, in order, or no transaction, or a refusal.
 */
import { describe, expect, it } from 'vitest';
import { type InventoryEntry, MAX_CHANGES, MAX_SOURCE_OBJECTS } from '../../../src/api/v1alpha1/index.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { changesForRender, type RenderToCompare } from '../../../src/sources/changes-for-render.ts';
import { inventoryEntry } from '../../../src/sources/inventory.ts';

const KEY = 'the controller key';
const obj = (
  apiVersion: string,
  kind: string,
  name: string,
  body: Record<string, unknown> = {},
  namespace?: string,
): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name, ...(namespace && { namespace }) },
  ...body,
});
const cm = (name: string, data: Record<string, string> = {}) =>
  obj('v1', 'ConfigMap', name, { data }, 'shop');
const deployment = (name: string, image: string) =>
  obj(
    'apps/v1',
    'Deployment',
    name,
    { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } },
    'shop',
  );
const namespace = obj('v1', 'Namespace', 'shop');
const crd = obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widgets.example.com');

const inventoryOf = (objects: KubeObject[]): InventoryEntry[] => objects.map((o) => inventoryEntry(o, KEY));
const plan = (input: Partial<RenderToCompare> & Pick<RenderToCompare, 'objects'>) =>
  changesForRender({ inventory: [], prune: true, digestKey: KEY, ...input });
const summary = (p: ReturnType<typeof plan>) =>
  p.kind === 'changes' ? p.changes.map((c) => `${c.type} ${c.target.kind} ${c.target.name}`) : p.kind;

describe('changesForRender', () => {
  it('applies every object of a first render, in the render’s order, and the inventory becomes the render', () => {
    const objects = [namespace, crd, cm('settings'), deployment('web', 'web:1')];
    const p = plan({ objects });
    expect(summary(p)).toEqual([
      'Apply Namespace shop',
      'Apply CustomResourceDefinition widgets.example.com',
      'Apply ConfigMap settings',
      'Apply Deployment web',
    ]);
    if (p.kind !== 'changes') throw new Error(p.kind);
    expect(p.changes[3]).toEqual({
      type: 'Apply',
      target: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'shop' },
      content: deployment('web', 'web:1'),
    });
    // A cluster-scoped target names no namespace.
    expect(p.changes[0]?.target).toEqual({ apiVersion: 'v1', kind: 'Namespace', name: 'shop' });
    expect(p.next).toEqual(inventoryOf(objects));
  });

  it('applies what is new or changed, leaves the unchanged alone, prunes the dropped last in reverse', () => {
    const before = [cm('a'), cm('gone-1'), deployment('web', 'web:1'), cm('gone-2')];
    const after = [cm('a'), cm('new'), deployment('web', 'web:2')];
    const p = plan({ objects: after, inventory: inventoryOf(before) });
    expect(summary(p)).toEqual([
      'Apply ConfigMap new',
      'Apply Deployment web',
      'Delete ConfigMap gone-2',
      'Delete ConfigMap gone-1',
    ]);
    if (p.kind !== 'changes') throw new Error(p.kind);
    expect(p.changes[2]).toEqual({
      type: 'Delete',
      target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'gone-2', namespace: 'shop' },
    });
    expect(p.pruned.map((e) => e.name)).toEqual(['gone-2', 'gone-1']);
    expect(p.next).toEqual(inventoryOf(after));
  });

  it('is no transaction when nothing changed', () => {
    const objects = [cm('a'), deployment('web', 'web:1')];
    expect(plan({ objects, inventory: inventoryOf(objects) })).toEqual({
      kind: 'unchanged',
      left: [],
      next: inventoryOf(objects),
    });
  });

  it('never prunes a Namespace, a CRD or what its render marked; each is left, said, and forgotten', () => {
    const marked = cm('keep-me');
    marked.metadata.annotations = { 'tx.janus.io/prune': 'disabled' };
    const before = [namespace, crd, marked, cm('a')];
    const p = plan({ objects: [cm('a')], inventory: inventoryOf(before) });
    expect(p.kind).toBe('unchanged');
    if (p.kind !== 'unchanged') throw new Error(p.kind);
    expect(p.left.map((l) => [l.entry.name, l.reason])).toEqual([
      ['keep-me', 'PruneDisabled'],
      ['widgets.example.com', 'CustomResourceDefinition'],
      ['shop', 'Namespace'],
    ]);
    expect(p.left[2]?.message).toBe(
      'v1 Namespace shop is left in the cluster: a Namespace is never pruned: deleting it would delete everything in it',
    );
    expect(p.next).toEqual(inventoryOf([cm('a')]));
  });

  it('prunes nothing when the source does not prune', () => {
    const p = plan({ objects: [cm('b')], inventory: inventoryOf([cm('a')]), prune: false });
    expect(summary(p)).toEqual(['Apply ConfigMap b']);
    if (p.kind !== 'changes') throw new Error(p.kind);
    expect(p.left.map((l) => [l.entry.name, l.reason])).toEqual([['a', 'PruneOff']]);
  });

  it('applies an object moved to another API version of its group, and prunes none for it', () => {
    const v1 = obj('autoscaling/v1', 'HorizontalPodAutoscaler', 'web', { spec: {} }, 'shop');
    const v2 = obj('autoscaling/v2', 'HorizontalPodAutoscaler', 'web', { spec: {} }, 'shop');
    expect(summary(plan({ objects: [v2], inventory: inventoryOf([v1]) }))).toEqual([
      'Apply HorizontalPodAutoscaler web',
    ]);
  });

  it(`refuses a render of more than ${MAX_SOURCE_OBJECTS} objects, or one object twice`, () => {
    const many = Array.from({ length: MAX_SOURCE_OBJECTS + 1 }, (_, i) => cm(`c${i}`));
    expect(plan({ objects: many })).toEqual({
      kind: 'refused',
      reason: 'TooManyObjects',
      message: `the render has ${MAX_SOURCE_OBJECTS + 1} objects; a source may render at most ${MAX_SOURCE_OBJECTS}`,
    });
    expect(plan({ objects: many.slice(0, MAX_SOURCE_OBJECTS) }).kind).toBe('changes');
    expect(plan({ objects: [cm('a'), cm('b'), cm('a')] })).toEqual({
      kind: 'refused',
      reason: 'DuplicateObject',
      message: 'the render has v1 ConfigMap shop/a twice; each object may be rendered once',
    });
  });

  it(`refuses a commit of more than ${MAX_CHANGES} changes: a largest render replaced at once`, () => {
    const old = Array.from({ length: MAX_SOURCE_OBJECTS }, (_, i) => cm(`old-${i}`));
    const renamed = Array.from({ length: MAX_SOURCE_OBJECTS }, (_, i) => cm(`new-${i}`));
    const p = plan({ objects: renamed, inventory: inventoryOf(old) });
    expect(p.kind === 'refused' && p.reason).toBe('TooManyChanges');
    // Half of it at once fits.
    const half = [...renamed.slice(0, 256), ...old.slice(256)];
    expect(plan({ objects: half, inventory: inventoryOf(old) }).kind).toBe('changes');
  });
});

/**
 * What a field manager owns of an object, read from managedFields the real API server wrote
 * (fixtures/managed-fields.json, made by test/support/cluster/capture-managed-fields.ts): the
 * undo of a source's Apply sends exactly this back.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  appliedEntry,
  type FieldSet,
  ownedFields,
  reappliedConfiguration,
  unionOf,
} from '../../../src/changes/managed-fields.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';

interface Fixture {
  name: string;
  applied: KubeObject;
  live: KubeObject;
}
const { manager, fixtures } = JSON.parse(
  readFileSync(new URL('./fixtures/managed-fields.json', import.meta.url), 'utf8'),
) as { manager: string; fixtures: Fixture[] };

const fixture = (name: string) => fixtures.find((f) => f.name === name) as Fixture;

type Deployment = KubeObject & {
  spec: {
    replicas?: number;
    template: { spec: { containers: { image?: string; env?: { valueFrom?: { fieldRef?: object } }[] }[] } };
  };
};

/**
 * What the source owns of what it applied: an atomic struct (a fieldRef) is owned whole, with the
 * apiVersion the server defaulted inside it; sending it back changes nothing.
 */
function ownedOf(applied: KubeObject): KubeObject {
  const owned = structuredClone(applied) as Deployment;
  for (const container of owned.kind === 'Deployment' ? owned.spec.template.spec.containers : []) {
    for (const env of container.env ?? []) {
      if (env.valueFrom?.fieldRef) env.valueFrom.fieldRef = { apiVersion: 'v1', ...env.valueFrom.fieldRef };
    }
  }
  return owned;
}

const alone = fixture('Deployment applied by the source alone');
const changedByOthers = fixture('Deployment changed by others after the source applied it');

describe('reappliedConfiguration, on objects the real API server returned', () => {
  it.each(fixtures.filter((f) => f.name.endsWith('by the source alone')).map((f) => [f.name, f] as const))(
    '%s: is exactly what the source applied, none of what the server defaulted',
    (_name, f) => {
      expect(reappliedConfiguration(f.live, f.live, manager)).toEqual(ownedOf(f.applied));
    },
  );

  it('leaves out what others took over since (a replica count, an image) and what they added', () => {
    const expected = ownedOf(alone.applied) as Deployment;
    delete expected.spec.replicas;
    delete expected.spec.template.spec.containers[0]?.image;
    expect(reappliedConfiguration(changedByOthers.live, changedByOthers.live, manager)).toEqual(expected);
    // Their fields are there, and not the source's.
    expect(changedByOthers.live.metadata.labels).toHaveProperty('example.com/team');
    expect(changedByOthers.live.metadata.annotations).toHaveProperty('example.com/scanned');
  });

  it('gives back the prior value of a field the commit took from another manager, not a release', () => {
    // Before: a person had scaled to 3 and a tool had set the image; the commit applied both again.
    const config = reappliedConfiguration(changedByOthers.live, alone.live, manager) as Deployment;
    expect(config.spec.replicas).toBe(3);
    expect(config.spec.template.spec.containers[0]?.image).toBe('registry.example.com/shop/web:1.0.1');
    // What neither owned stays out: the label the person added.
    expect(config.metadata.labels).not.toHaveProperty('example.com/team');
  });

  it('releases what the commit added that the object did not have', () => {
    const added = structuredClone(alone.live);
    added.metadata.managedFields = [
      ...(alone.live.metadata.managedFields ?? []).map((e) => {
        const entry = structuredClone(e) as { fieldsV1: Record<string, Record<string, unknown>> };
        entry.fieldsV1['f:metadata'] = { ...entry.fieldsV1['f:metadata'], 'f:labels': { 'f:new': {} } };
        return entry;
      }),
    ];
    const config = reappliedConfiguration(alone.live, added, manager) as Deployment;
    expect(config.metadata.labels).toEqual(alone.applied.metadata.labels);
  });

  it('is undefined for a manager without an Apply entry, or an entry of another API version', () => {
    const live = changedByOthers.live;
    expect(reappliedConfiguration(live, live, 'kubectl-edit')).toBeUndefined(); // an Update, not an Apply
    expect(reappliedConfiguration(live, live, 'janus-source:elsewhere/shop')).toBeUndefined();
    expect(reappliedConfiguration({ ...live, apiVersion: 'apps/v1beta2' }, live, manager)).toBeUndefined();
  });

  it('finds the Apply entry of the object itself, not a status write', () => {
    expect(appliedEntry(changedByOthers.live, manager)?.operation).toBe('Apply');
    expect(appliedEntry(changedByOthers.live, 'kube-controller-manager')).toBeUndefined();
  });
});

describe('unionOf', () => {
  const set = (s: Record<string, unknown>) => s as FieldSet;

  it('names what either names; a whole value stays whole', () => {
    expect(unionOf(set({ 'f:a': { 'f:b': {} } }), set({ 'f:a': { 'f:c': {} }, 'f:d': {} }))).toEqual({
      'f:a': { 'f:b': {}, 'f:c': {} },
      'f:d': {},
    });
    expect(unionOf(set({ 'f:a': {} }), set({ 'f:a': { 'f:c': {} } }))).toEqual({ 'f:a': {} });
  });
});

describe('ownedFields', () => {
  const set = (s: Record<string, unknown>) => s as FieldSet;

  it('owns a whole value at an empty set: a scalar, an atomic list or struct', () => {
    expect(ownedFields({ a: [1, 2], b: { c: 1 }, d: 'x' }, set({ 'f:a': {}, 'f:b': {} }))).toEqual({
      a: [1, 2],
      b: { c: 1 },
    });
  });

  it('owns only that a map or an item is there at "."', () => {
    expect(ownedFields({ labels: { a: '1' } }, set({ 'f:labels': { '.': {} } }))).toEqual({ labels: {} });
    const list = [{ name: 'a', image: 'x' }];
    expect(ownedFields(list, set({ 'k:{"name":"a"}': { '.': {} } }))).toEqual([{ name: 'a' }]);
  });

  it('finds set items by value and list items by index, in the order of the list', () => {
    expect(ownedFields(['c', 'a', 'b'], set({ 'v:"b"': {}, 'v:"c"': {} }))).toEqual(['c', 'b']);
    expect(ownedFields([{ x: 1 }, { x: 2 }], set({ 'i:1': { 'f:x': {} } }))).toEqual([{ x: 2 }]);
  });

  it('skips what the set names and the object does not have', () => {
    expect(
      ownedFields({ a: 1, list: [{ name: 'a' }] }, set({ 'f:gone': {}, 'f:list': { 'k:{"name":"b"}': {} } })),
    ).toEqual({ list: [] });
    expect(ownedFields([1], set({ 'i:5': {}, 'v:not json': {} }))).toEqual([]);
  });
});

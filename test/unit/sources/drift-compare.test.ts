/** Whether a live object differs from its last applied render: the fields the source's manager owns only. */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { ANNOTATION_APPLIED_BY } from '../../../src/saga/targets.ts';
import { driftedPaths, dryRunObject, MAX_DRIFT_PATHS } from '../../../src/sources/drift-compare.ts';

const MANAGER = 'janus-source:shop/shop';

/** What the API server returns: the object, with the source's Apply entry owning `fields`. */
function served(
  spec: Record<string, unknown>,
  fields: Record<string, unknown>,
  extra: Partial<KubeObject['metadata']> = {},
  others: unknown[] = [],
): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'shop',
      resourceVersion: '12',
      generation: 3,
      labels: { app: 'web' },
      annotations: { [ANNOTATION_APPLIED_BY]: 'shop/shop-3f2a9c1@uid#0' },
      ...extra,
      managedFields: [
        {
          manager: MANAGER,
          operation: 'Apply',
          apiVersion: 'apps/v1',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:labels': { 'f:app': {} },
              'f:annotations': { [`f:${ANNOTATION_APPLIED_BY}`]: {} },
            },
            'f:spec': fields,
          },
        },
        ...others,
      ],
    },
    spec,
    status: { replicas: 1 },
  } as KubeObject;
}

const OWNED = { 'f:replicas': {}, 'f:template': { 'f:spec': { 'f:image': {} } } };

describe('driftedPaths', () => {
  it('is empty when the fields the source owns hold the values it applied', () => {
    const want = served({ replicas: 2, template: { spec: { image: 'web:1' } } }, OWNED);
    const live = served({ replicas: 2, template: { spec: { image: 'web:1' } } }, OWNED, {
      resourceVersion: '99',
      generation: 9,
      annotations: { [ANNOTATION_APPLIED_BY]: 'shop/shop-1111111@other#3' },
    });
    expect(driftedPaths(want, live, MANAGER)).toEqual([]);
  });

  it('names a field the source set that someone changed', () => {
    const want = served({ replicas: 2, template: { spec: { image: 'web:1' } } }, OWNED);
    const live = served({ replicas: 5, template: { spec: { image: 'web:1' } } }, OWNED);
    expect(driftedPaths(want, live, MANAGER)).toEqual(['spec.replicas']);
  });

  it('names a field the source set that someone removed', () => {
    const want = served({ replicas: 2, template: { spec: { image: 'web:1' } } }, OWNED);
    const live = served({ template: { spec: { image: 'web:1' } } }, OWNED);
    expect(driftedPaths(want, live, MANAGER)).toEqual(['spec.replicas']);
  });

  it('ignores a field only another manager set (the source never did)', () => {
    const want = served({ replicas: 2, paused: false, template: { spec: { image: 'web:1' } } }, OWNED);
    const live = served({ replicas: 2, paused: true, template: { spec: { image: 'web:1' } } }, OWNED);
    expect(driftedPaths(want, live, MANAGER)).toEqual([]);
  });

  it('names a label the source set that was changed, not one another manager added', () => {
    const want = served({ replicas: 2 }, { 'f:replicas': {} });
    const live = served({ replicas: 2 }, { 'f:replicas': {} }, { labels: { app: 'other', team: 'x' } });
    expect(driftedPaths(want, live, MANAGER)).toEqual(['metadata.labels.app']);
  });

  it('is the whole object when the dry run has no entry of the source manager', () => {
    const want = served({ replicas: 2 }, OWNED);
    expect(driftedPaths(want, want, 'janus-source:shop/other')).toEqual(['(the source owns no field)']);
  });

  it('names at most MAX_DRIFT_PATHS paths', () => {
    const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f:k${i}`, {}]));
    const values = (v: number) => Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, v]));
    const paths = driftedPaths(served(values(1), many), served(values(2), many), MANAGER);
    expect(paths).toHaveLength(MAX_DRIFT_PATHS + 1);
    expect(paths.at(-1)).toBe('…');
  });
});

describe('dryRunObject', () => {
  it('sends the render without status, with the live stamp (whose absence in the render is no drift)', () => {
    const rendered = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: 'shop', annotations: { a: 'b' } },
      data: { x: '1' },
      status: { anything: true },
    } as KubeObject;
    const live = {
      ...rendered,
      metadata: { ...rendered.metadata, annotations: { [ANNOTATION_APPLIED_BY]: 'stamp' } },
    } as KubeObject;
    const sent = dryRunObject(rendered, live);
    expect(sent).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: 'shop', annotations: { a: 'b', [ANNOTATION_APPLIED_BY]: 'stamp' } },
      data: { x: '1' },
    });
    const unstamped = dryRunObject(rendered, { ...live, metadata: { name: 'c', namespace: 'shop' } });
    expect(unstamped.metadata.annotations).toEqual({ a: 'b' });
  });
});

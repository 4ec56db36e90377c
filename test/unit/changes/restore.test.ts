import { describe, expect, it } from 'vitest';
import { restoredObject, restoreOperation } from '../../../src/changes/restore.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';

const obj = (rv: string, data: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'shop', resourceVersion: rv, uid: 'u', managedFields: [{}] },
  data,
});

describe('restoredObject', () => {
  it('is the prior object without server-set metadata, conditional on a version only when given', () => {
    expect(restoredObject(obj('5', { a: 'before' }))).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: 'shop' },
      data: { a: 'before' },
    });
    expect(restoredObject(obj('5', {}), '9').metadata.resourceVersion).toBe('9');
  });
});

describe('restoreOperation', () => {
  it('replaces the current object with the cleaned prior one, conditionally on the current version', () => {
    const op = restoreOperation(obj('5', { a: 'before' }), obj('9', { a: 'theirs' }));
    expect(op).toEqual({
      op: 'replace',
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'c', namespace: 'shop', resourceVersion: '9' },
        data: { a: 'before' },
      },
    });
  });

  it('re-creates what was deleted, deletes what did not exist before, and leaves absence alone', () => {
    expect(restoreOperation(obj('5', {}), undefined)).toMatchObject({
      op: 'create',
      object: { metadata: { name: 'c' } },
    });
    expect(
      (restoreOperation(obj('5', {}), undefined) as { object: KubeObject }).object.metadata,
    ).not.toHaveProperty('resourceVersion');
    expect(restoreOperation(undefined, obj('9', {}))).toEqual({ op: 'delete', resourceVersion: '9' });
    expect(restoreOperation(undefined, undefined)).toEqual({ op: 'none' });
  });
});

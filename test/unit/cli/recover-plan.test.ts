import { describe, expect, it } from 'vitest';
import { parseSelection, restoreOperation, standingItems } from '../../../src/cli/recover-plan.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { item, txn } from './fixtures.ts';

const failed = txn({
  phase: 'Failed',
  items: [
    item(0, { committed: true, rolledBack: true }),
    item(1, {
      committed: true,
      conflict: true,
      error: 'web changed',
      lease: 'shop/janus-lock-deployment-web-1',
    }),
    item(2, { committed: true, error: 'Forbidden' }),
  ],
});

describe('standingItems', () => {
  it('lists committed changes not rolled back, conflicts marked', () => {
    expect(standingItems(failed).map((s) => [s.index, s.conflict, s.description, s.lease])).toEqual([
      [1, true, 'apps/v1 Deployment shop/web', 'shop/janus-lock-deployment-web-1'],
      [2, false, 'v1 Secret shop/web-credentials', undefined],
    ]);
  });
});

describe('parseSelection', () => {
  const standing = standingItems(failed);

  it('takes "all" as every conflict, and numbers as given', () => {
    expect(parseSelection('all', standing)).toEqual([1]);
    expect(parseSelection(' 1 , 1', standing)).toEqual([1]);
  });

  it('refuses what it cannot restore, saying why', () => {
    expect(() => parseSelection('0', standing)).toThrow(/change 0 is not left standing .*standing: 1, 2/);
    expect(() => parseSelection('2', standing)).toThrow(
      /change 2 is not a conflict: its undo was refused \(Forbidden\)/,
    );
    expect(() => parseSelection('one', standing)).toThrow(/expected "all" or change numbers/);
    expect(() => parseSelection('1,', standing)).toThrow(/expected "all"/);
    expect(() => parseSelection('all', standingItems(txn({ phase: 'Failed', items: [] })))).toThrow(
      /no change is in conflict/,
    );
  });
});

describe('restoreOperation', () => {
  const obj = (rv: string, data: Record<string, string>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'c', namespace: 'shop', resourceVersion: rv, uid: 'u', managedFields: [{}] },
    data,
  });

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

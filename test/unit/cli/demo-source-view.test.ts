/** What janus demo --sources prints of its Source and of each commit's transaction. */
import { describe, expect, it } from 'vitest';
import type { ItemStatus, Source } from '../../../src/api/v1alpha1/index.ts';
import { ANNOTATION_SOURCE_REVISION } from '../../../src/api/v1alpha1/index.ts';
import { changeLines, sourceTable, transactionOfCommit } from '../../../src/cli/demo/source-view.ts';
import { aTransaction } from '../../support/transactions.ts';
import { ago, NOW } from './fixtures.ts';

const COMMIT = (digit: string) => digit.repeat(40);

function source(status: Source['status']): Source {
  return {
    apiVersion: 'tx.janus.io/v1alpha1',
    kind: 'Source',
    metadata: { name: 'shop', namespace: 'shop', creationTimestamp: ago(150) },
    spec: { path: 'overlays/demo', kustomize: {}, serviceAccountName: 'deployer' },
    ...(status && { status }),
  };
}

const item = (parts: Partial<ItemStatus>): ItemStatus => ({ target: '', type: 'Apply', ...parts });

describe('the sources story', () => {
  it('prints the Source as kubectl get jsrc does: its printer columns, empty where there is no value yet', () => {
    const rolledBack = source({
      lastApplied: { revision: COMMIT('2'), shortRevision: '2222222', transaction: 'shop-2222222' },
      lastAttempted: {
        revision: COMMIT('3'),
        shortRevision: '3333333',
        transaction: 'shop-3333333',
        outcome: 'RolledBack',
      },
      drift: { count: 0 },
    });
    expect(sourceTable([rolledBack, { ...source(undefined), metadata: { name: 'new' } }], NOW)).toBe(
      [
        'NAME   APPLIED   ATTEMPTED   OUTCOME      DRIFT   AGE',
        'shop   2222222   3333333     RolledBack   0       2m30s',
        'new                                               <unknown>',
        '',
      ].join('\n'),
    );
  });

  it('tells a created object from an updated one and a prune, and says when a rollback undid it', () => {
    const txn = aTransaction({
      name: 'shop-2222222',
      changes: [
        {
          type: 'Apply',
          target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'web-config-new' },
          content: {},
        },
        { type: 'Apply', target: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, content: {} },
        { type: 'Delete', target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'web-config-old' } },
      ],
      status: {
        phase: 'RolledBack',
        items: [
          item({ resourceVersion: '', rolledBack: true }),
          item({ resourceVersion: '41', rolledBack: true }),
          item({ type: 'Delete', resourceVersion: '40', rolledBack: false }),
        ],
      },
    });
    expect(changeLines(txn)).toEqual([
      'created ConfigMap web-config-new, undone',
      'updated Deployment web, undone',
      'pruned ConfigMap web-config-old',
    ]);
  });

  it("finds a commit's transaction by the revision it applies, not by its name", () => {
    const of = (name: string, commit: string) =>
      aTransaction({ name, annotations: { [ANNOTATION_SOURCE_REVISION]: `main@sha1:${commit}` } });
    const txns = [of('shop-1111111', COMMIT('1')), of('shop-11111112', `${'1'.repeat(39)}2`)];
    expect(transactionOfCommit(txns, `${'1'.repeat(39)}2`)?.metadata.name).toBe('shop-11111112');
    expect(transactionOfCommit(txns, COMMIT('3'))).toBeUndefined();
  });
});

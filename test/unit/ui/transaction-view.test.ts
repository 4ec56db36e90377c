import { describe, expect, it } from 'vitest';
import type { Source, Transaction } from '../../../src/api/v1alpha1/index.ts';
import { commitPageUrl } from '../../../src/commit-status/forge.ts';
import { historyView } from '../../../src/ui/history-view.ts';
import { sourceRow } from '../../../src/ui/sources.ts';
import { actionsOn, transactionDetail, transactionRow } from '../../../src/ui/transaction-view.ts';

function txn(
  phase: string | undefined,
  items: object[] = [],
  extra: Partial<Transaction['status']> = {},
): Transaction {
  return {
    apiVersion: 'tx.janus.io/v1alpha1',
    kind: 'Transaction',
    metadata: { name: 'web', namespace: 'shop', uid: 'u1', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {
      serviceAccountName: 'deployer',
      changes: [0, 1, 2].map((i) => ({
        target: { apiVersion: 'v1', kind: 'ConfigMap', name: `c${i}` },
        type: 'Patch',
        content: { data: { v: String(i) } },
      })),
      health: { stableFor: '30s' },
    } as Transaction['spec'],
    ...(phase && { status: { phase, items, ...extra } as NonNullable<Transaction['status']> }),
  };
}

describe('the web view of a Transaction', () => {
  it('offers the requests the requests table accepts now, and says why not otherwise', () => {
    expect(actionsOn(txn('Committing')).actions.map((a) => a.request)).toEqual(['cancel']);
    expect(actionsOn(txn('Committed', [{ committed: true }])).actions.map((a) => a.request)).toEqual([
      'rollback',
    ]);
    // A rollback of a Failed transaction is a retry of its rollback, as janus rollback makes it.
    expect(actionsOn(txn('Failed', [{ committed: true }])).actions.map((a) => a.request)).toEqual([
      'retry-rollback',
    ]);
    const done = actionsOn(txn('RolledBack', [{ committed: true, rolledBack: true }]));
    expect(done.actions).toEqual([]);
    expect(done.noActionBecause).toBe('shop/web is already rolled back');
  });

  it('lists the undo order as a rollback takes it: the last committed change first', () => {
    const detail = transactionDetail(
      txn('RollingBack', [{ committed: true, rolledBack: true }, { committed: true }, { prepared: true }]),
      [],
    );
    expect(detail.undoOrder).toEqual([1, 0]);
    expect(detail.changes.map((c) => c.outcome)).toEqual(['rolled-back', 'committed', 'prepared']);
  });

  it('gives the page the bake window to count down, not a countdown that goes stale', () => {
    const baking = txn('Verifying', [], {
      health: { check: 'Commit', startedAt: '2026-01-01T00:00:01Z', stableSince: '2026-01-01T00:00:05Z' },
    });
    expect(transactionRow(baking).bake).toEqual({ stableSince: '2026-01-01T00:00:05Z', stableForMs: 30_000 });
    expect(transactionRow(txn('Committed')).bake).toBeUndefined();
  });

  it('lays the phases and the Events on one timeline, oldest first', () => {
    const detail = transactionDetail(
      txn('Committed', [], {
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Committed', lastTransitionTime: '2026-01-01T00:00:09Z' },
        ],
      }),
      [{ type: 'Normal', reason: 'Prepared', message: 'locked', lastTimestamp: '2026-01-01T00:00:03Z' }],
    );
    expect(detail.timeline.map((t) => t.reason)).toEqual(['Created', 'Prepared', 'Ready: Committed']);
  });
});

describe('links to the forge', () => {
  const commit = 'a'.repeat(40);
  it('links a commit on GitHub, Gitea and GitLab, and nothing it cannot tell', () => {
    expect(commitPageUrl('https://github.com/org/deploys.git', commit)).toBe(
      `https://github.com/org/deploys/commit/${commit}`,
    );
    expect(commitPageUrl('https://gitlab.com/group/sub/deploys', commit)).toBe(
      `https://gitlab.com/group/sub/deploys/-/commit/${commit}`,
    );
    expect(commitPageUrl('https://codeberg.org/org/deploys', commit)).toBe(
      `https://codeberg.org/org/deploys/commit/${commit}`,
    );
    expect(commitPageUrl('/srv/git/deploys', commit)).toBeUndefined();
    expect(commitPageUrl('https://github.com/org/deploys', 'not-a-commit')).toBeUndefined();
  });

  it('shows the history oldest first, each record and source linked', () => {
    const view = historyView(
      'https://github.com/org/deploys',
      'janus/results',
      {
        tip: commit,
        more: false,
        entries: [
          {
            record: 'b'.repeat(40),
            recordedAt: '2026-01-02T00:00:00Z',
            transaction: 'shop/b',
            phase: 'RolledBack',
          },
          {
            record: commit,
            recordedAt: '2026-01-01T00:00:00Z',
            transaction: 'shop/a',
            phase: 'Committed',
            source: 'c'.repeat(40),
          },
        ],
      },
      false,
    );
    expect(view.entries.map((e) => e.transaction)).toEqual(['shop/a', 'shop/b']);
    expect(view.entries[0]?.sourceUrl).toBe(`https://github.com/org/deploys/commit/${'c'.repeat(40)}`);
    expect(view.entries[1]?.recordUrl).toBe(`https://github.com/org/deploys/commit/${'b'.repeat(40)}`);
  });
});

describe('a Source row', () => {
  it('shows what kubectl get sources shows: applied, attempted, outcome, drift', () => {
    const commit = 'f'.repeat(40);
    const row = sourceRow({
      apiVersion: 'tx.janus.io/v1alpha1',
      kind: 'Source',
      metadata: { name: 'shop', namespace: 'shop' },
      spec: { path: 'overlays/prod', kustomize: {}, serviceAccountName: 'deployer' } as Source['spec'],
      status: {
        lastApplied: { revision: commit, shortRevision: 'fffffff', transaction: 'shop-fffffff' },
        lastAttempted: { revision: commit, outcome: 'Committed' },
        drift: { count: 2, objects: ['v1 ConfigMap shop/a', 'v1 ConfigMap shop/b'] },
        conditions: [
          { type: 'Ready', status: 'True', reason: 'Applied', lastTransitionTime: '2026-01-01T00:00:00Z' },
        ],
      },
    });
    expect(row).toMatchObject({
      key: 'shop/shop',
      render: 'kustomize overlays/prod',
      applied: { commit, transaction: 'shop-fffffff' },
      attempted: { outcome: 'Committed' },
      drift: '2 object(s)',
      ready: { status: 'True', reason: 'Applied' },
    });
    const fresh = sourceRow({
      apiVersion: 'tx.janus.io/v1alpha1',
      kind: 'Source',
      metadata: { name: 'n', namespace: 'ns' },
      spec: { path: 'chart', helm: {}, serviceAccountName: 'deployer' } as Source['spec'],
    });
    expect(fresh).toMatchObject({ render: 'helm chart', drift: 'None', objects: 0 });
    expect(fresh.applied).toBeUndefined();
  });
});

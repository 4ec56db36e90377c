import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ItemStatus, Transaction } from '../../../src/api/v1alpha1/index.ts';
import { changeOutcome, parseTrailers, renderTransactionResult } from '../../../src/results/index.ts';
import { aTransaction, sourceAnnotations } from '../../support/transactions.ts';

const SOURCE_SHA = 'b'.repeat(40);
const CONTEXT = { controllerVersion: '0.1.0', identity: 'janus-7d9f-abc' };

function transaction(status: Transaction['status']): Transaction {
  return aTransaction({
    namespace: 'default',
    uid: 'uid-1',
    annotations: sourceAnnotations({
      repository: 'https://git.example.com/platform/deploys.git',
      revision: `main@sha1:${SOURCE_SHA}`,
      path: 'transactions/deploy-v2',
    }),
    serviceAccountName: 'deploy-sa',
    changes: [
      {
        target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg' },
        type: 'Patch',
        content: { data: { a: '1' } },
      },
      { target: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, type: 'Update', content: {} },
      { target: { apiVersion: 'v1', kind: 'Secret', name: 'old', namespace: 'other' }, type: 'Delete' },
    ],
    ...(status && { status }),
  });
}

const item = (target: string, fields: Partial<ItemStatus>): ItemStatus => ({
  target,
  prepared: true,
  ...fields,
});

const committed = transaction({
  phase: 'Committed',
  startedAt: '2026-03-01T10:00:00Z',
  completedAt: '2026-03-01T10:00:04Z',
  items: [
    item('v1 ConfigMap default/cfg', { committed: true }),
    item('apps/v1 Deployment default/web', { committed: true }),
    item('v1 Secret other/old', { committed: true }),
  ],
  conditions: [
    {
      type: 'Ready',
      status: 'True',
      reason: 'Committed',
      message: 'all 3 changes committed',
      lastTransitionTime: '2026-03-01T10:00:04Z',
    },
  ],
});

describe('renderTransactionResult', () => {
  it('writes results/<namespace>/<name>.yaml with phase, source, per-change outcome, timestamps and who', () => {
    const record = renderTransactionResult(committed, CONTEXT);
    expect(Object.keys(record.files)).toEqual(['results/default/deploy-v2.yaml']);
    const document = parse(record.files['results/default/deploy-v2.yaml'] ?? '');
    expect(document).toEqual({
      apiVersion: 'tx.janus.io/v1alpha1',
      kind: 'TransactionResult',
      transaction: { namespace: 'default', name: 'deploy-v2', uid: 'uid-1' },
      phase: 'Committed',
      progress: '3/3',
      message: 'all 3 changes committed',
      source: {
        repository: 'https://git.example.com/platform/deploys.git',
        revision: `main@sha1:${SOURCE_SHA}`,
        path: 'transactions/deploy-v2',
      },
      serviceAccountName: 'deploy-sa',
      startedAt: '2026-03-01T10:00:00Z',
      completedAt: '2026-03-01T10:00:04Z',
      changes: [
        { target: 'v1 ConfigMap default/cfg', type: 'Patch', outcome: 'committed' },
        { target: 'apps/v1 Deployment default/web', type: 'Update', outcome: 'committed' },
        { target: 'v1 Secret other/old', type: 'Delete', outcome: 'committed' },
      ],
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          reason: 'Committed',
          message: 'all 3 changes committed',
          lastTransitionTime: '2026-03-01T10:00:04Z',
        },
      ],
      recordedBy: { controller: 'janus 0.1.0', identity: 'janus-7d9f-abc' },
    });
  });

  it('names the transaction and phase in the subject, with Janus trailers', () => {
    const { message } = renderTransactionResult(committed, CONTEXT);
    expect(message.split('\n')[0]).toBe('default/deploy-v2: Committed (3/3 changes)');
    expect(parseTrailers(message)).toEqual({
      'Janus-Transaction': 'default/deploy-v2',
      'Janus-Phase': 'Committed',
      'Janus-Source': SOURCE_SHA,
    });
  });

  it('summarizes a failure with conflicts, and records item errors', () => {
    const failed = transaction({
      phase: 'Failed',
      items: [
        item('v1 ConfigMap default/cfg', { committed: true, rolledBack: true }),
        item('apps/v1 Deployment default/web', {
          committed: true,
          conflict: true,
          error: 'changed by someone else after commit',
        }),
        item('v1 Secret other/old', { error: 'forbidden: deploy-sa cannot delete secrets' }),
      ],
      conditions: [
        {
          type: 'Stalled',
          status: 'True',
          reason: 'RollbackConflict',
          message: 'conflicts: apps/v1 Deployment default/web',
          lastTransitionTime: '2026-03-01T10:00:09Z',
        },
      ],
    });
    const record = renderTransactionResult(failed, CONTEXT);
    expect(record.message.split('\n')[0]).toBe(
      'default/deploy-v2: Failed (2/3 committed, 1 rolled back, 1 in conflict)',
    );
    const document = parse(record.files['results/default/deploy-v2.yaml'] ?? '');
    expect(document.message).toBe('conflicts: apps/v1 Deployment default/web');
    expect(document.changes).toEqual([
      { target: 'v1 ConfigMap default/cfg', type: 'Patch', outcome: 'rolled-back' },
      {
        target: 'apps/v1 Deployment default/web',
        type: 'Update',
        outcome: 'conflict',
        error: 'changed by someone else after commit',
      },
      {
        target: 'v1 Secret other/old',
        type: 'Delete',
        outcome: 'failed',
        error: 'forbidden: deploy-sa cannot delete secrets',
      },
    ]);
  });

  it('phrases rollbacks', () => {
    const items = [
      item('a', { committed: true, rolledBack: true }),
      item('b', { committed: true, rolledBack: true }),
      item('c', {}),
    ];
    const subject = (phase: 'RolledBack' | 'RollingBack') =>
      renderTransactionResult(transaction({ phase, items }), CONTEXT).message.split('\n')[0];
    expect(subject('RolledBack')).toBe('default/deploy-v2: RolledBack (2/2 changes rolled back)');
    expect(subject('RollingBack')).toBe('default/deploy-v2: RollingBack (undoing 2/3 committed changes)');
  });

  it('records the health gate: what it checked, how it ended, how long it took, and each target’s state', () => {
    const unhealthy = transaction({
      phase: 'RollingBack',
      items: [
        item('v1 ConfigMap default/cfg', { committed: true }),
        item('apps/v1 Deployment default/web', {
          committed: true,
          health: {
            status: 'Failed',
            reason: 'CrashLoopBackOff',
            message: 'Deployment default/web: pod default/web-7c9 container app is in CrashLoopBackOff',
            since: '2026-03-01T10:00:09Z',
          },
        }),
      ],
      health: {
        check: 'Commit',
        startedAt: '2026-03-01T10:00:04Z',
        deadline: '2026-03-01T10:05:04Z',
        completedAt: '2026-03-01T10:00:16Z',
        result: 'Unhealthy',
        message:
          'Deployment default/web: pod default/web-7c9 container app is in CrashLoopBackOff (after 12s)',
      },
    });
    const doc = parse(Object.values(renderTransactionResult(unhealthy, CONTEXT).files)[0] ?? '') as Record<
      string,
      unknown
    >;
    expect(doc.health).toEqual({
      check: 'Commit',
      result: 'Unhealthy',
      startedAt: '2026-03-01T10:00:04Z',
      completedAt: '2026-03-01T10:00:16Z',
      seconds: 12,
      message: 'Deployment default/web: pod default/web-7c9 container app is in CrashLoopBackOff (after 12s)',
    });
    expect((doc.changes as Record<string, unknown>[])[1]?.health).toEqual({
      status: 'Failed',
      reason: 'CrashLoopBackOff',
      message: 'Deployment default/web: pod default/web-7c9 container app is in CrashLoopBackOff',
    });
    expect((doc.changes as Record<string, unknown>[])[0]).not.toHaveProperty('health');
  });

  it('is deterministic, so writing the same state twice changes nothing', () => {
    expect(renderTransactionResult(committed, CONTEXT)).toEqual(
      renderTransactionResult(structuredClone(committed), CONTEXT),
    );
  });

  it('prefers the status source, then the context, over annotations, and never shows credentials', () => {
    const txn = transaction({
      phase: 'Committed',
      source: { repository: 'https://user:token@git.example.com/x.git' },
    });
    const document = parse(Object.values(renderTransactionResult(txn, CONTEXT).files)[0] ?? '');
    expect(document.source.repository).toBe('https://git.example.com/x.git');
    const overridden = renderTransactionResult(txn, { ...CONTEXT, source: { path: 'elsewhere/deploy-v2' } });
    expect(parse(Object.values(overridden.files)[0] ?? '').source.path).toBe('elsewhere/deploy-v2');
  });

  it('renders a transaction without status (created, not yet started) as Pending', () => {
    const record = renderTransactionResult(transaction(undefined), CONTEXT);
    expect(record.message.split('\n')[0]).toBe('default/deploy-v2: Pending (0/3 changes)');
    expect(
      parse(Object.values(record.files)[0] ?? '').changes.map((c: { outcome: string }) => c.outcome),
    ).toEqual(['pending', 'pending', 'pending']);
  });
});

describe('changeOutcome', () => {
  it('ranks conflict over rolled back over committed over failed', () => {
    expect(changeOutcome(undefined)).toBe('pending');
    expect(changeOutcome(item('t', {}))).toBe('prepared');
    expect(changeOutcome(item('t', { error: 'x' }))).toBe('failed');
    expect(changeOutcome(item('t', { committed: true, error: 'x' }))).toBe('committed');
    expect(changeOutcome(item('t', { committed: true, rolledBack: true }))).toBe('rolled-back');
    expect(changeOutcome(item('t', { committed: true, conflict: true }))).toBe('conflict');
  });
});

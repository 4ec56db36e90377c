import { describe, expect, it } from 'vitest';
import { ANNOTATION_SOURCE_REPOSITORY, type Transaction } from '../../../src/api/v1alpha1/index.ts';
import { fromGit, type RetentionPolicy, retentionVerdicts } from '../../../src/retention/select.ts';
import { aTransaction } from '../../support/transactions.ts';

const HOUR = 3_600_000;
const NOW = Date.parse('2026-11-24T12:00:00Z');
const policy: RetentionPolicy = { keepLast: 2, minAgeMs: HOUR, rollbackWindowMs: 24 * HOUR };

function txn(
  name: string,
  phase: string | undefined,
  hoursAgo: number,
  extra: { namespace?: string; items?: Array<{ committed?: boolean; rolledBack?: boolean }> } = {},
): Transaction {
  return aTransaction({
    name,
    ...(extra.namespace && { namespace: extra.namespace }),
    uid: `uid-${name}`,
    status: {
      ...(phase && { phase: phase as never }),
      ...(phase && { completedAt: new Date(NOW - hoursAgo * HOUR).toISOString() }),
      items: extra.items ?? [],
    },
  });
}

const verdicts = (list: Transaction[], recorded = (_: Transaction) => true) =>
  Object.fromEntries(
    retentionVerdicts(list, policy, NOW, recorded).map((v, i) => [
      list[i]?.metadata.name,
      v.prune ? 'prune' : v.why,
    ]),
  );

describe('retentionVerdicts', () => {
  it('keeps the newest N finished per namespace, and prunes older ones past their age and window', () => {
    const list = [
      txn('newest', 'RolledBack', 30),
      txn('second', 'RolledBack', 40),
      txn('old-rolled-back', 'RolledBack', 50),
      txn('old-failed-clean', 'Failed', 60, { items: [{ committed: false }] }),
      txn('old-committed', 'Committed', 70),
      txn('other-ns', 'RolledBack', 90, { namespace: 'payments' }),
    ];
    expect(verdicts(list)).toEqual({
      newest: 'keep-last',
      second: 'keep-last',
      'old-rolled-back': 'prune',
      'old-failed-clean': 'prune',
      'old-committed': 'prune',
      'other-ns': 'keep-last', // the newest of its own namespace
    });
  });

  it('never prunes one in flight, one a human must act on, or one being deleted', () => {
    const deleting = txn('deleting', 'RolledBack', 100);
    deleting.metadata.deletionTimestamp = new Date(NOW).toISOString();
    const list = [
      txn('a', 'RolledBack', 1.5),
      txn('b', 'RolledBack', 1.5),
      txn('pending', undefined, 100),
      txn('committing', 'Committing', 100),
      txn('rolling-back', 'RollingBack', 100),
      txn('conflict', 'Failed', 100, { items: [{ committed: true }, { committed: true, rolledBack: true }] }),
      deleting,
    ];
    expect(verdicts(list)).toMatchObject({
      pending: 'in-flight',
      committing: 'in-flight',
      'rolling-back': 'in-flight',
      conflict: 'needs-a-human',
      deleting: 'in-flight',
    });
  });

  it('keeps the young, and a Committed one inside its rollback window', () => {
    const list = [
      txn('a', 'RolledBack', 0.1),
      txn('b', 'RolledBack', 0.2),
      txn('young', 'RolledBack', 0.5),
      txn('committed-in-window', 'Committed', 23),
      txn('committed-past-window', 'Committed', 25),
      txn('rolled-back-past-age', 'RolledBack', 2),
    ];
    expect(verdicts(list)).toEqual({
      a: 'keep-last',
      b: 'keep-last',
      young: 'young',
      'committed-in-window': 'rollback-window',
      'committed-past-window': 'prune',
      'rolled-back-past-age': 'prune',
    });
  });

  it('keeps what the results branch does not hold yet', () => {
    const list = [txn('a', 'RolledBack', 3), txn('b', 'RolledBack', 3), txn('unrecorded', 'RolledBack', 50)];
    expect(verdicts(list, (t) => t.metadata.name !== 'unrecorded').unrecorded).toBe('not-recorded');
  });

  it('keeps none by count with keepLast 0', () => {
    const list = [txn('only', 'RolledBack', 2)];
    expect(retentionVerdicts(list, { ...policy, keepLast: 0 }, NOW, () => true)[0]).toEqual({ prune: true });
  });
});

describe('fromGit', () => {
  it('tells a materialized Transaction by its source annotation', () => {
    const plain = txn('plain', 'Committed', 1);
    expect(fromGit(plain)).toBe(false);
    plain.metadata.annotations = { [ANNOTATION_SOURCE_REPOSITORY]: 'https://git.example.com/org/deploys' };
    expect(fromGit(plain)).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import type { ChangeType, ItemStatus, Transaction } from '../../../src/api/v1alpha1/index.ts';
import type { HealthAssessment } from '../../../src/health/index.ts';
import {
  describePending,
  elapsed,
  type GateItem,
  gatedItems,
  gateVerdict,
  healthChanged,
  itemHealth,
  pendingCheck,
  startCheck,
} from '../../../src/saga/health-gate.ts';
import { item, txnIn } from './transaction-fixture.ts';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

const change = (index: number, type: ChangeType, apiVersion: string, kind: string): GateItem => ({
  index,
  change: { type, target: { apiVersion, kind, name: `t${index}` } },
});
const ITEMS = [
  change(0, 'Patch', 'v1', 'ConfigMap'),
  change(1, 'Update', 'apps/v1', 'Deployment'),
  change(2, 'Create', 'v1', 'Service'),
  change(3, 'Delete', 'apps/v1', 'StatefulSet'),
  change(4, 'Patch', 'example.com/v1', 'Widget'),
];

function withHealth(health: Transaction['spec']['health']): Transaction {
  const txn = txnIn();
  return { ...txn, spec: { ...txn.spec, ...(health && { health }) } };
}
const allCommitted: ItemStatus[] = ITEMS.map(() => item.committed());
const allRolledBack: ItemStatus[] = ITEMS.map(() => item.rolledBack());
const indexes = (items: GateItem[]) => items.map((i) => i.index);

describe('gatedItems: which targets the gate waits for', () => {
  it('Auto (the default) after commit: kinds with a health rule, not what was deleted', () => {
    expect(indexes(gatedItems(withHealth(undefined), ITEMS, allCommitted, 'Commit'))).toEqual([1, 2]);
  });

  it('All after commit: every target still there, whatever its kind', () => {
    const txn = withHealth({ targets: 'All' });
    expect(indexes(gatedItems(txn, ITEMS, allCommitted, 'Commit'))).toEqual([0, 1, 2, 4]);
  });

  it('None: no gate at all', () => {
    expect(gatedItems(withHealth({ targets: 'None' }), ITEMS, allCommitted, 'Commit')).toEqual([]);
  });

  it('after a rollback: what it put back (a deleted StatefulSet re-created), not what it deleted (a created Service)', () => {
    expect(indexes(gatedItems(withHealth(undefined), ITEMS, allRolledBack, 'Rollback'))).toEqual([1, 3]);
  });

  it("after a rollback: an Apply's target if it existed before, not if the rollback deleted it", () => {
    const applies = [
      change(0, 'Apply', 'apps/v1', 'Deployment'),
      change(1, 'Apply', 'apps/v1', 'Deployment'),
    ];
    const statuses = [
      { ...item.rolledBack(), resourceVersion: '41' },
      { ...item.rolledBack(), resourceVersion: '' },
    ];
    expect(indexes(gatedItems(withHealth(undefined), applies, statuses, 'Rollback'))).toEqual([0]);
    const committed = statuses.map((s) => ({ ...s, rolledBack: false }));
    expect(indexes(gatedItems(withHealth(undefined), applies, committed, 'Commit'))).toEqual([0, 1]);
  });

  it('leaves out changes not committed, and conflicts a rollback left standing', () => {
    const statuses = [
      item.committed(),
      item.prepared(),
      item.committed(),
      item.committed(),
      item.committed(),
    ];
    expect(indexes(gatedItems(withHealth(undefined), ITEMS, statuses, 'Commit'))).toEqual([2]);
    const afterRollback = [
      item.rolledBack(),
      item.conflict(),
      item.rolledBack(),
      item.rolledBack(),
      item.rolledBack(),
    ];
    expect(indexes(gatedItems(withHealth(undefined), ITEMS, afterRollback, 'Rollback'))).toEqual([3]);
  });
});

describe('startCheck and pendingCheck', () => {
  it('gives the check health.timeout (default 5m) from now', () => {
    const check = startCheck(withHealth(undefined), 'Commit', NOW, iso(NOW + 3_600_000));
    expect(check).toEqual({ check: 'Commit', startedAt: iso(NOW), deadline: iso(NOW + 300_000) });
    expect(startCheck(withHealth({ timeout: '90s' }), 'Rollback', NOW, undefined).deadline).toBe(
      iso(NOW + 90_000),
    );
  });

  it('never runs past the transaction’s own deadline', () => {
    expect(startCheck(withHealth({ timeout: '1h' }), 'Commit', NOW, iso(NOW + 20_000)).deadline).toBe(
      iso(NOW + 20_000),
    );
  });

  it('is pending from start to completion', () => {
    const started = startCheck(withHealth(undefined), 'Rollback', NOW, undefined);
    expect(pendingCheck({ health: started })).toBe('Rollback');
    expect(
      pendingCheck({ health: { ...started, completedAt: iso(NOW), result: 'Healthy' } }),
    ).toBeUndefined();
    expect(pendingCheck({})).toBeUndefined();
    expect(pendingCheck(undefined)).toBeUndefined();
  });
});

const a = (
  status: HealthAssessment['status'],
  reason: string = status,
  message = `Deployment shop/web: ${reason}`,
): HealthAssessment => ({
  status,
  reason,
  message,
});

describe('gateVerdict', () => {
  const deadline = iso(NOW + 60_000);

  it('healthy when every target is Current (and when there is none)', () => {
    expect(gateVerdict([{ index: 0, assessment: a('Current') }], NOW, deadline)).toEqual({ kind: 'healthy' });
    expect(gateVerdict([], NOW, deadline)).toEqual({ kind: 'healthy' });
  });

  it('unhealthy at once when one target Failed, even before the deadline and with others in progress', () => {
    const failed = { index: 1, assessment: a('Failed', 'CrashLoopBackOff') };
    const verdict = gateVerdict([{ index: 0, assessment: a('InProgress') }, failed], NOW, deadline);
    expect(verdict).toEqual({ kind: 'unhealthy', failed });
  });

  it('waits while a target is in progress, and times out at the deadline', () => {
    const pending = [{ index: 0, assessment: a('InProgress', 'UpdatedReplicasNotAvailable') }];
    expect(gateVerdict(pending, NOW, deadline)).toEqual({ kind: 'waiting', pending });
    expect(gateVerdict(pending, NOW + 60_000, deadline)).toEqual({ kind: 'timedOut', pending });
  });
});

describe('itemHealth', () => {
  it('keeps `since` while the status holds, and moves it when the status changes', () => {
    const first = itemHealth(undefined, a('InProgress', 'UpdatedReplicasPending'), NOW);
    expect(first.since).toBe(iso(NOW));
    const later = itemHealth(first, a('InProgress', 'ReplicasNotReady'), NOW + 5_000);
    expect(later.since).toBe(iso(NOW));
    expect(healthChanged(first, later)).toBe(true); // the reason changed: worth a write
    const same = itemHealth(later, a('InProgress', 'ReplicasNotReady'), NOW + 6_000);
    expect(healthChanged(later, same)).toBe(false);
    const done = itemHealth(same, a('Current', 'RolloutComplete'), NOW + 9_000);
    expect(done.since).toBe(iso(NOW + 9_000));
  });

  it('bounds the message it records', () => {
    const long = itemHealth(undefined, a('Failed', 'ErrImagePull', 'x'.repeat(5_000)), NOW);
    expect(long.message?.length).toBe(1024);
    expect(long.message?.endsWith('… [truncated]')).toBe(true);
  });

  it('records a reason in the CamelCase the status schema wants, and compares it as recorded', () => {
    const first = itemHealth(undefined, a('InProgress', 'Waiting for DB'), NOW);
    expect(first.reason).toBe('WaitingForDB');
    const again = itemHealth(first, a('InProgress', 'Waiting for DB'), NOW + 5_000);
    expect(healthChanged(first, again)).toBe(false); // no status write for the same words
  });
});

describe('messages', () => {
  it('names up to three pending targets', () => {
    const pending = [1, 2, 3, 4].map((i) => ({
      index: i,
      assessment: a('InProgress', 'R', `Job shop/j${i}: running`),
    }));
    expect(describePending(pending)).toBe(
      'Job shop/j1: running; Job shop/j2: running; Job shop/j3: running; and 1 more',
    );
  });

  it('says how long a check took', () => {
    expect(elapsed(iso(NOW - 12_400), NOW)).toBe('12s');
    expect(elapsed(iso(NOW - 184_000), NOW)).toBe('3m4s');
    expect(elapsed(undefined, NOW)).toBe('0s');
  });
});

/** Deadlines, rollback on request, retried and recovered rollbacks, and deletion in every phase. */
import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import { leaseName } from '../../../src/locks/lease-name.ts';
import { resolveTarget } from '../../../src/saga/targets.ts';
import { failAtCommit } from '../../support/cluster/admission.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { createConfigMaps, patchingEach } from '../../support/cluster/patch-each.ts';
import {
  ALL_ON_CONFIGMAPS,
  annotate,
  cmTarget,
  data,
  getTxn,
  leasesOf,
  testNamespace,
  transaction,
  txnRef,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { type ControllerProcess, withController } from '../../support/processes/controller-process.ts';
import { runUntil, stepOf } from '../../support/processes/paused.ts';

const clients = useClients();

async function namespace(label: string, names: string[] = ['a', 'b']): Promise<string> {
  const name = await testNamespace(clients.admin, `life-${label}`, { deployer: [ALL_ON_CONFIGMAPS] });
  await createConfigMaps(clients.admin, name, names, () => ({ v: 'original' }));
  return name;
}

const patchAB = (ns: string, name: string, opts: { timeout?: string } = {}): Transaction =>
  patchingEach(ns, name, ['a', 'b'], { v: 'new' }, opts);

/** A Lease on `target` held by a transaction that is not ours, for a long time. */
async function foreignLock(ns: string, target: string): Promise<string> {
  const name = leaseName(resolveTarget(cmTarget(target), ns, true));
  await clients.admin.create({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name, namespace: ns },
    spec: {
      holderIdentity: 'elsewhere/other-txn/0000',
      leaseDurationSeconds: 3600,
      renewTime: new Date().toISOString().replace('Z', '000Z'),
    },
  });
  return name;
}

const controllerFor = <T>(ns: string, body: (c: ControllerProcess) => Promise<T>): Promise<T> =>
  withController({ kubeconfig: clients.kubeconfigs.controller, namespace: ns }, body);

const deadlinePassed = async (ns: string, name: string) => {
  const deadline = Date.parse((await getTxn(clients.admin, ns, name)).status?.deadline ?? '');
  await eventually(() => expect(Date.now()).toBeGreaterThan(deadline), { timeoutMs: 30_000 });
};

describe('deadline', () => {
  it('fails a transaction that could not commit anything in time, leaving targets and foreign locks alone', async () => {
    const ns = await namespace('deadline-none');
    const foreign = await foreignLock(ns, 'b');
    await controllerFor(ns, async () => {
      await clients.admin.create(patchAB(ns, 'late', { timeout: '3s' }));
      await eventually(async () => {
        const reconciling = (await getTxn(clients.admin, ns, 'late')).status?.conditions?.find(
          (c) => c.type === 'Reconciling',
        );
        expect(reconciling).toMatchObject({ status: 'True', reason: 'LockWait' });
        expect(reconciling?.message).toContain('held by transaction elsewhere/other-txn');
      });
      const txn = await waitForPhase(clients.admin, ns, 'late', 'Failed');
      expect(txn.status?.conditions?.find((c) => c.type === 'Stalled')?.reason).toBe('Timeout');
      expect(await data(clients.admin, ns, 'a')).toEqual({ v: 'original' });
      await expect
        .poll(async () => (await leasesOf(clients.admin, ns)).map((l) => l.metadata.name), {
          timeout: 30_000,
        })
        .toEqual([]);
      // The foreign Lease carries no managed-by label, and it is still there.
      expect(
        await clients.admin.find({
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          name: foreign,
          namespace: ns,
        }),
      ).toBeDefined();
    });
  });

  it('rolls back what was committed when the deadline passes mid-commit, even while the controller was down', async () => {
    const probeNs = await namespace('deadline-probe');
    const firstCommit = await stepOf(
      clients.admin,
      clients.kubeconfigs.controller,
      patchAB(probeNs, 'late'),
      'Committing',
      'Committed',
      '/configmaps/a',
    );
    const ns = await namespace('deadline-some');
    await runUntil(
      clients.admin,
      clients.kubeconfigs.controller,
      patchAB(ns, 'late', { timeout: '3s' }),
      firstCommit,
    );
    expect(await data(clients.admin, ns, 'a')).toEqual({ v: 'new' });
    await deadlinePassed(ns, 'late');
    await controllerFor(ns, async () => {
      const txn = await waitForPhase(clients.admin, ns, 'late', 'RolledBack');
      expect(await data(clients.admin, ns, 'a')).toEqual({ v: 'original' });
      expect(await data(clients.admin, ns, 'b')).toEqual({ v: 'original' });
      expect(txn.status?.items?.map((i) => [i.committed, i.rolledBack ?? false])).toEqual([
        [true, true],
        [false, false],
      ]);
      expect(txn.status?.conditions?.find((c) => c.type === 'RolledBack')?.message).toContain('deadline');
    });
  });
});

describe('rollback on request', () => {
  it('rolls back a transaction committed longer ago than its timeout, and consumes the annotation', async () => {
    const ns = await namespace('request');
    await controllerFor(ns, async () => {
      await clients.admin.create(patchAB(ns, 'old', { timeout: '2s' }));
      await waitForPhase(clients.admin, ns, 'old', 'Committed');
      await deadlinePassed(ns, 'old');
      await annotate(clients.admin, ns, 'old', {
        'tx.janus.io/request-rollback': 'release 42 broke checkout',
      });
      const txn = await waitForPhase(clients.admin, ns, 'old', 'RolledBack');
      expect(await data(clients.admin, ns, 'a')).toEqual({ v: 'original' });
      expect(await data(clients.admin, ns, 'b')).toEqual({ v: 'original' });
      expect(txn.metadata.annotations?.['tx.janus.io/request-rollback']).toBeUndefined();
      const events = await clients.admin.list('v1', 'Event', ns, {
        fieldSelector: 'involvedObject.name=old',
      });
      expect(events.items.map((e) => e.message)).toContain(
        'rollback requested with the tx.janus.io/request-rollback annotation: release 42 broke checkout',
      );
    });
  });

  it('retries a rollback that failed: automatically with backoff, and at once on retry-rollback', async () => {
    const ns = await namespace('retry');
    await controllerFor(ns, async () => {
      await clients.admin.create(patchAB(ns, 'stuck'));
      await waitForPhase(clients.admin, ns, 'stuck', 'Committed');
      // Take away the ServiceAccount's rights: the rollback is refused (not a conflict).
      await clients.admin.delete({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        name: 'deployer',
        namespace: ns,
      });
      await annotate(clients.admin, ns, 'stuck', { 'tx.janus.io/request-rollback': 'now' });
      const failed = await waitForPhase(clients.admin, ns, 'stuck', 'Failed');
      expect(failed.status?.conditions?.find((c) => c.type === 'Stalled')?.reason).toBe('RollbackFailed');
      expect(Date.parse(failed.status?.nextRecoveryAt ?? '')).toBeGreaterThan(Date.now());

      await clients.admin.create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name: 'deployer', namespace: ns },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'deployer' },
        subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: ns }],
      });
      await annotate(clients.admin, ns, 'stuck', { 'tx.janus.io/retry-rollback': 'rights restored' });
      const txn = await waitForPhase(clients.admin, ns, 'stuck', 'RolledBack');
      expect(txn.metadata.annotations?.['tx.janus.io/retry-rollback']).toBeUndefined();
      expect(await data(clients.admin, ns, 'a')).toEqual({ v: 'original' });
    });
  });
});

describe('deletion', () => {
  const gone = (ns: string, name: string) =>
    eventually(async () => expect(await clients.admin.find(txnRef(ns, name))).toBeUndefined(), {
      timeoutMs: 30_000,
    });

  it('is immediate before the controller ever saw the transaction, and after it finished', async () => {
    const ns = await namespace('delete-terminal');
    await clients.admin.create(patchAB(ns, 'never-seen'));
    await clients.admin.delete(txnRef(ns, 'never-seen'));
    await gone(ns, 'never-seen');
    await controllerFor(ns, async () => {
      await clients.admin.create(patchAB(ns, 'done'));
      await waitForPhase(clients.admin, ns, 'done', 'Committed');
      await eventually(async () =>
        expect((await getTxn(clients.admin, ns, 'done')).metadata.finalizers ?? []).toEqual([]),
      );
      await clients.admin.delete(txnRef(ns, 'done'));
      await gone(ns, 'done');
      // Deleting a finished transaction undoes nothing.
      expect(await data(clients.admin, ns, 'a')).toEqual({ v: 'new' });
    });
  });

  it('releases the locks of a transaction waiting for a lock, and rolls nothing back', async () => {
    const ns = await namespace('delete-waiting');
    await foreignLock(ns, 'b');
    await controllerFor(ns, async () => {
      await clients.admin.create(patchAB(ns, 'waiting'));
      await eventually(async () =>
        expect(
          (await getTxn(clients.admin, ns, 'waiting')).status?.conditions?.find(
            (c) => c.type === 'Reconciling',
          )?.reason,
        ).toBe('LockWait'),
      );
      expect(await leasesOf(clients.admin, ns)).toHaveLength(1); // ours, on a
      await clients.admin.delete(txnRef(ns, 'waiting'));
      await gone(ns, 'waiting');
      expect(await leasesOf(clients.admin, ns)).toEqual([]);
    });
  });

  it('in the middle of committing: releases the locks and keeps what was committed', async () => {
    const probeNs = await namespace('delete-probe');
    const firstCommit = await stepOf(
      clients.admin,
      clients.kubeconfigs.controller,
      patchAB(probeNs, 'mid'),
      'Committing',
      'Committed',
      '/configmaps/a',
    );
    const ns = await namespace('delete-committing');
    await runUntil(clients.admin, clients.kubeconfigs.controller, patchAB(ns, 'mid'), firstCommit);
    await clients.admin.delete(txnRef(ns, 'mid'));
    expect((await getTxn(clients.admin, ns, 'mid')).metadata.deletionTimestamp).toBeDefined();
    await controllerFor(ns, async () => {
      await gone(ns, 'mid');
      expect(await leasesOf(clients.admin, ns)).toEqual([]);
      expect(await data(clients.admin, ns, 'a')).toEqual({ v: 'new' });
      expect(await data(clients.admin, ns, 'b')).toEqual({ v: 'original' });
    });
  });

  it('in the middle of rolling back: releases the locks and stops', async () => {
    const ns = await namespace('delete-rollingback');
    const removePolicy = await failAtCommit(clients.admin, ns, 'refused');
    try {
      const doomed = (name: string, inNamespace: string) =>
        transaction(inNamespace, name, [
          { target: cmTarget('a'), type: 'Patch', content: { data: { v: 'new' } } },
          { target: cmTarget('refused'), type: 'Create', content: { data: {} } },
        ]);
      // A baseline of the same shape, in the same namespace (the policy applies there only).
      const rollingBack = await stepOf(
        clients.admin,
        clients.kubeconfigs.controller,
        doomed('baseline', ns),
        'RollingBack',
        'RolledBack',
      );
      const paused = await runUntil(
        clients.admin,
        clients.kubeconfigs.controller,
        doomed('mid-rollback', ns),
        rollingBack,
      );
      expect(paused.status?.phase).toBe('RollingBack');
      await clients.admin.delete(txnRef(ns, 'mid-rollback'));
      await controllerFor(ns, async () => {
        await gone(ns, 'mid-rollback');
        expect(
          (await leasesOf(clients.admin, ns)).filter(
            (l) => l.metadata.labels?.['tx.janus.io/transaction'] === 'mid-rollback',
          ),
        ).toEqual([]);
      });
    } finally {
      await removePolicy();
    }
  });
});

/**
 * Locks: waiting for a holder, taking over an expired Lease, Git order, cluster-scoped targets.
 * The rollback store: Secrets' prior state only in Secrets, and prior states beyond 1 MiB.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PatchType } from '../../../src/kube/client.ts';
import { leaseName, microTime } from '../../../src/locks/lease-name.ts';
import { resolveTarget } from '../../../src/saga/targets.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { createConfigMaps, patchingEach } from '../../support/cluster/patch-each.ts';
import {
  ALL_ON_CONFIGMAPS,
  annotate,
  cmTarget,
  configMap,
  data,
  getTxn,
  leasesOf,
  testNamespace,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import {
  type ControllerProcess,
  startController,
  withController,
} from '../../support/processes/controller-process.ts';

const clients = useClients();

const namespace = (label: string, rules = [ALL_ON_CONFIGMAPS]): Promise<string> =>
  testNamespace(clients.admin, `locks-${label}`, { deployer: rules });

const controllerFor = <T>(ns: string, body: (c: ControllerProcess) => Promise<T>): Promise<T> =>
  withController({ kubeconfig: clients.kubeconfigs.controller, namespace: ns }, body);

const reconciling = async (ns: string, name: string) =>
  (await getTxn(clients.admin, ns, name)).status?.conditions?.find((c) => c.type === 'Reconciling');

describe('locks', () => {
  it('waits for a lock held by another transaction and takes it over once it expires', async () => {
    const ns = await namespace('takeover');
    await clients.admin.create(configMap(ns, 'a', { v: '1' }));
    await clients.admin.create({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: leaseName(resolveTarget(cmTarget('a'), ns, true)), namespace: ns },
      spec: {
        holderIdentity: `${ns}/crashed-txn/1234`,
        leaseDurationSeconds: 3600,
        renewTime: microTime(Date.now()),
      },
    });
    await controllerFor(ns, async () => {
      await clients.admin.create(
        transaction(ns, 'patient', [{ target: cmTarget('a'), type: 'Patch', content: { data: { v: '2' } } }]),
      );
      await eventually(async () => {
        const condition = await reconciling(ns, 'patient');
        expect(condition?.reason).toBe('LockWait');
        expect(condition?.message).toContain(`held by transaction ${ns}/crashed-txn`);
      });
      // The holder stops renewing: its Lease expires (as if its last renewal was long ago).
      const lockRef = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        name: leaseName(resolveTarget(cmTarget('a'), ns, true)),
        namespace: ns,
      };
      await clients.admin.patch(
        lockRef,
        { spec: { leaseDurationSeconds: 1, renewTime: microTime(Date.now() - 60_000) } },
        PatchType.merge,
      );
      await waitForPhase(clients.admin, ns, 'patient', 'Committed');
      expect(await data(clients.admin, ns, 'a')).toEqual({ v: '2' });
      await expect.poll(() => leasesOf(clients.admin, ns), { timeout: 30_000 }).toEqual([]);
    });
  });

  it('lets transactions from Git take a contested lock in Git order, whatever order they were created in', async () => {
    const ns = await namespace('git-order');
    await clients.admin.create(configMap(ns, 'shared', { v: '0' }));
    const fromGit = (name: string, sequence: number) =>
      transaction(ns, name, [{ target: cmTarget('shared'), type: 'Patch', content: { data: { v: name } } }], {
        annotations: {
          'tx.janus.io/source-repository': 'https://git.example/platform.git',
          'tx.janus.io/source-sequence': String(sequence),
        },
      });
    // The later commit's transaction exists first.
    await clients.admin.create(fromGit('second', 2));
    await clients.admin.create(fromGit('first', 1));
    await controllerFor(ns, async () => {
      const second = await waitForPhase(clients.admin, ns, 'second', 'Committed');
      const first = await waitForPhase(clients.admin, ns, 'first', 'Committed');
      expect(await data(clients.admin, ns, 'shared')).toEqual({ v: 'second' });
      expect(Date.parse(first.status?.completedAt ?? '')).toBeLessThanOrEqual(
        Date.parse(second.status?.completedAt ?? ''),
      );
      const events = await clients.admin.list('v1', 'Event', ns, {
        fieldSelector: 'involvedObject.name=second',
      });
      expect(events.items.map((e) => `${e.reason}: ${e.message}`)).toContainEqual(
        `LockWait: waiting for transaction ${ns}/first, which comes first in Git order`,
      );
    });
  });

  it('locks a cluster-scoped target in the controller namespace, and rolls it back', async () => {
    const ns = await namespace('cluster');
    const role = `janus-test-${ns}`;
    await clients.admin.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: role },
      rules: [{ apiGroups: ['rbac.authorization.k8s.io'], resources: ['clusterroles'], verbs: ['*'] }],
    });
    await clients.admin.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: role },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: ns }],
    });
    const created = `${role}-made`;
    await controllerFor(ns, async () => {
      await clients.admin.create(
        transaction(ns, 'cluster', [
          {
            target: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: created },
            type: 'Create',
            content: { rules: [] },
          },
        ]),
      );
      const txn = await waitForPhase(clients.admin, ns, 'cluster', 'Committed');
      expect(txn.status?.items?.[0]?.lease).toMatch(/^janus-system\/janus-lock-clusterrole-/);
      const ref = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: created };
      expect(await clients.admin.find(ref)).toBeDefined();
      await annotate(clients.admin, ns, 'cluster', { 'tx.janus.io/request-rollback': 'test' });
      await waitForPhase(clients.admin, ns, 'cluster', 'RolledBack');
      expect(await clients.admin.find(ref)).toBeUndefined();
      await expect
        .poll(
          async () =>
            (await leasesOf(clients.admin, 'janus-system')).filter(
              (l) => l.metadata.labels?.['tx.janus.io/transaction'] === 'cluster',
            ),
          {
            timeout: 30_000,
          },
        )
        .toEqual([]);
    });
  });
});

describe('rollback store', () => {
  it('keeps the prior state of a Secret in a Secret only, never in a ConfigMap', async () => {
    const ns = await namespace('secret', [
      ALL_ON_CONFIGMAPS,
      { apiGroups: [''], resources: ['secrets'], verbs: ['*'] },
    ]);
    const password = `hunter2-${randomBytes(6).toString('hex')}`;
    await clients.admin.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: ns },
      stringData: { password },
    });
    await controllerFor(ns, async () => {
      await clients.admin.create(
        transaction(ns, 'rotate', [
          {
            target: { apiVersion: 'v1', kind: 'Secret', name: 'creds' },
            type: 'Update',
            content: { stringData: { password: 'rotated' } },
          },
          { target: cmTarget('note'), type: 'Create', content: { data: { rotated: 'yes' } } },
        ]),
      );
      await waitForPhase(clients.admin, ns, 'rotate', 'Committed');
      const configMaps = await clients.admin.list('v1', 'ConfigMap', ns);
      const everything = JSON.stringify(configMaps.items);
      expect(everything).not.toContain(password);
      expect(everything).not.toContain(Buffer.from(password).toString('base64'));
      const store = await clients.admin.get({
        apiVersion: 'v1',
        kind: 'Secret',
        name: 'rotate-rollback',
        namespace: ns,
      });
      expect(store.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Transaction', name: 'rotate' });

      await annotate(clients.admin, ns, 'rotate', { 'tx.janus.io/request-rollback': 'test' });
      await waitForPhase(clients.admin, ns, 'rotate', 'RolledBack');
      const restored = await clients.admin.get({
        apiVersion: 'v1',
        kind: 'Secret',
        name: 'creds',
        namespace: ns,
      });
      expect(Buffer.from((restored.data as Record<string, string>).password ?? '', 'base64').toString()).toBe(
        password,
      );
    });
  });

  it('works when the prior states are larger than one object can hold (1 MiB)', async () => {
    const ns = await namespace('large');
    const big = (seed: string) => ({ blob: seed.repeat((600 * 1024) / seed.length), v: 'original' });
    await createConfigMaps(clients.admin, ns, ['big-a', 'big-b', 'big-c'], big);
    await controllerFor(ns, async () => {
      await clients.admin.create(patchingEach(ns, 'large', ['big-a', 'big-b', 'big-c'], { v: 'new' }));
      await waitForPhase(clients.admin, ns, 'large', 'Committed');
      const stores = (await clients.admin.list('v1', 'ConfigMap', ns)).items.filter((c) =>
        c.metadata.name.startsWith('large-rollback'),
      );
      expect(stores.length).toBeGreaterThanOrEqual(2);
      await annotate(clients.admin, ns, 'large', { 'tx.janus.io/request-rollback': 'test' });
      await waitForPhase(clients.admin, ns, 'large', 'RolledBack');
      for (const name of ['big-a', 'big-b', 'big-c'])
        expect(await data(clients.admin, ns, name)).toEqual(big(name));
    });
  });
});

describe('leader election', () => {
  it('lets one of two controllers act, and the other finish what the first left in flight when it is killed', async () => {
    const ns = await namespace('leader');
    await createConfigMaps(clients.admin, ns, ['a', 'b'], () => ({ v: '1' }));
    const leaseArgs = [
      '--leader-lease-duration=4s',
      '--leader-renew-deadline=3s',
      '--leader-retry-period=1s',
    ];
    // Each test namespace gets its own leader Lease so runs in parallel do not elect each other.
    const env = {};
    const start = () =>
      startController({
        kubeconfig: clients.kubeconfigs.controller,
        namespace: ns,
        extraArgs: [...leaseArgs, `--leader-election-id=janus-${ns}`],
        env,
      });
    const one = await start();
    const two = await start();
    try {
      const leaderOf = async () => {
        const logs = await Promise.all([one.logs(), two.logs()]);
        const leaders = [one, two].filter((_, i) => logs[i]?.includes('"msg":"became leader"'));
        if (leaders.length !== 1) throw new Error(`${leaders.length} leaders`);
        return leaders[0] as ControllerProcess;
      };
      const leader = await eventually(leaderOf);
      const standby = leader === one ? two : one;

      // Hold the transaction in flight: b is locked by someone else for now.
      const foreign = leaseName(resolveTarget(cmTarget('b'), ns, true));
      await clients.admin.create({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: foreign, namespace: ns },
        spec: {
          holderIdentity: 'elsewhere/blocker/0',
          leaseDurationSeconds: 3600,
          renewTime: microTime(Date.now()),
        },
      });
      await clients.admin.create(patchingEach(ns, 'handover', ['a', 'b'], { v: '2' }));
      await eventually(async () => expect((await reconciling(ns, 'handover'))?.reason).toBe('LockWait'));
      expect(await standby.logs()).not.toContain('"step":"');

      await leader.kill();
      await clients.admin.delete({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        name: foreign,
        namespace: ns,
      });
      await waitForPhase(clients.admin, ns, 'handover', 'Committed', 120_000);
      expect(await standby.logs()).toContain('"msg":"became leader"');
      expect(await data(clients.admin, ns, 'a')).toEqual({ v: '2' });
      expect(await data(clients.admin, ns, 'b')).toEqual({ v: '2' });
    } finally {
      await Promise.all([one.stop(), two.stop()]);
      await clients.admin.patch(
        { apiVersion: 'v1', kind: 'Namespace', name: ns },
        { metadata: { labels: { done: 'yes' } } },
        PatchType.merge,
      );
    }
  });
});

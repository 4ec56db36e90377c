/**
 * Git order decides who takes a contested lock first, and never more: a transaction that already
 * holds some of its locks does not wait for one earlier in Git order that waits for those very
 * locks (both would wait until a deadline, with the locks held). This is what a forged or late
 * source-sequence could make of any Git transaction; here the provenance is genuine (written by a
 * cluster admin, whom the admission policy lets), as when the earlier one is seen late.
 */
import { describe, expect, it } from 'vitest';
import { PatchType } from '../../../src/kube/client.ts';
import { leaseName, microTime } from '../../../src/locks/lease-name.ts';
import { resolveTarget } from '../../../src/saga/targets.ts';
import { useClients } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  cmTarget,
  configMap,
  data,
  getTxn,
  testNamespace,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { withController } from '../../support/processes/controller-process.ts';

const clients = useClients();

const reconciling = async (ns: string, name: string) =>
  (await getTxn(clients.admin, ns, name)).status?.conditions?.find((c) => c.type === 'Reconciling');

describe('Git order', () => {
  it('never makes a transaction holding locks wait for an earlier one that waits for them', async () => {
    const ns = await testNamespace(clients.admin, 'git-order-held', { deployer: [ALL_ON_CONFIGMAPS] });
    await clients.admin.create(configMap(ns, 'a', { v: '0' }));
    await clients.admin.create(configMap(ns, 'b', { v: '0' }));
    // b's lock is held by a transaction gone silent; "later" takes a's lock first (locks are taken
    // in name order), then waits for b's.
    const lockOfB = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      name: leaseName(resolveTarget(cmTarget('b'), ns, true)),
      namespace: ns,
    };
    await clients.admin.create({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: lockOfB.name, namespace: ns },
      spec: {
        holderIdentity: `${ns}/crashed-txn/1234`,
        leaseDurationSeconds: 3600,
        renewTime: microTime(Date.now()),
      },
    });
    const fromGit = (name: string, sequence: number, targets: string[]) =>
      transaction(
        ns,
        name,
        targets.map((t) => ({ target: cmTarget(t), type: 'Patch' as const, content: { data: { v: name } } })),
        {
          timeout: '10m',
          annotations: {
            'tx.janus.io/source-repository': 'https://git.example/platform.git',
            'tx.janus.io/source-sequence': String(sequence),
          },
        },
      );
    await withController({ kubeconfig: clients.kubeconfigs.controller, namespace: ns }, async () => {
      await clients.admin.create(fromGit('later', 5, ['a', 'b']));
      await eventually(async () => {
        expect((await reconciling(ns, 'later'))?.message).toContain(`held by transaction ${ns}/crashed-txn`);
      });
      // Seen only now: earlier in Git order, it wants a's lock, which "later" holds.
      await clients.admin.create(fromGit('earlier', 1, ['a']));
      await eventually(async () => {
        expect((await reconciling(ns, 'earlier'))?.message).toContain(`held by transaction ${ns}/later`);
      });
      // b's holder is gone for good: its Lease expires.
      await clients.admin.patch(
        lockOfB,
        { spec: { leaseDurationSeconds: 1, renewTime: microTime(Date.now() - 60_000) } },
        PatchType.merge,
      );
      await waitForPhase(clients.admin, ns, 'later', 'Committed');
      await waitForPhase(clients.admin, ns, 'earlier', 'Committed');
    });
    expect(await data(clients.admin, ns, 'a')).toEqual({ v: 'earlier' });
    expect(await data(clients.admin, ns, 'b')).toEqual({ v: 'later' });
  });
});

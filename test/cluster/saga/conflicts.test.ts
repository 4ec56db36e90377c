/**
 * Someone else writes a target: between prepare and commit (the change is refused, never applied
 * over their write), and after commit (rollback leaves that target alone, undoes the others,
 * and ends Failed without looping).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import { PatchType } from '../../../src/kube/client.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { createConfigMaps, patchingEach } from '../../support/cluster/patch-each.ts';
import {
  ALL_ON_CONFIGMAPS,
  annotate,
  cmTarget,
  configMap,
  data,
  fourChanges,
  fourTargets,
  getTxn,
  leasesOf,
  testNamespace,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { startController } from '../../support/processes/controller-process.ts';
import { runUntil, stepOf } from '../../support/processes/paused.ts';

const clients = useClients();

async function namespaceWithTargets(label: string): Promise<string> {
  const name = await testNamespace(clients.admin, `conflict-${label}`, { deployer: [ALL_ON_CONFIGMAPS] });
  await fourTargets(clients.admin, name);
  return name;
}

const txnIn = (namespace: string): Transaction => transaction(namespace, 'contested', fourChanges());

/** Request number after which the four-change transaction has just entered Committing. */
let committingAt = 0;
beforeAll(async () => {
  const namespace = await namespaceWithTargets('baseline');
  committingAt = await stepOf(
    clients.admin,
    clients.kubeconfigs.controller,
    txnIn(namespace),
    'Committing',
    'Committed',
  );
});

describe('a write by someone else between prepare and commit', () => {
  const external: Record<string, (ns: string) => Promise<unknown>> = {
    Create: (ns) => clients.admin.create(configMap(ns, 'created', { theirs: 'too' })),
    Update: (ns) =>
      clients.admin.patch(
        { ...cmTarget('updated'), namespace: ns },
        { data: { theirs: 'edit' } },
        PatchType.merge,
      ),
    Patch: (ns) =>
      clients.admin.patch(
        { ...cmTarget('patched'), namespace: ns },
        { data: { theirs: 'edit' } },
        PatchType.merge,
      ),
    Delete: (ns) =>
      clients.admin.patch(
        { ...cmTarget('deleted'), namespace: ns },
        { data: { theirs: 'edit' } },
        PatchType.merge,
      ),
  };

  it.each(Object.keys(external).map((type, index) => ({ type, index })))(
    'is never overwritten by the $type change: it conflicts and the changes before it roll back',
    async ({ type, index }) => {
      const namespace = await namespaceWithTargets(type.toLowerCase());
      const paused = await runUntil(
        clients.admin,
        clients.kubeconfigs.controller,
        txnIn(namespace),
        committingAt,
      );
      expect(paused.status?.phase).toBe('Committing');
      await external[type]?.(namespace);

      const controller = await startController({ kubeconfig: clients.kubeconfigs.controller, namespace });
      try {
        const expected = index === 0 ? 'Failed' : 'RolledBack';
        const txn = await waitForPhase(clients.admin, namespace, 'contested', expected);
        const target = ['created', 'updated', 'patched', 'deleted'][index] ?? '';
        expect((await data(clients.admin, namespace, target))?.theirs).toBeDefined();
        expect(txn.status?.items?.[index]).toMatchObject({ committed: false });
        expect(txn.status?.items?.[index]?.error).toContain(`ConfigMap ${namespace}/${target} was`);
        expect(txn.status?.items?.[index]?.error).toContain('by someone else after prepare');
        // The changes before it were committed, then undone.
        for (const before of txn.status?.items?.slice(0, index) ?? []) {
          expect(before).toMatchObject({ committed: true, rolledBack: true });
        }
        await expect.poll(() => leasesOf(clients.admin, namespace), { timeout: 30_000 }).toEqual([]);
      } finally {
        await controller.stop();
      }
    },
  );
});

describe('a write by someone else after commit', () => {
  it('is left alone by the rollback, which undoes the rest and ends Failed without looping', async () => {
    const namespace = await namespaceWithTargets('after');
    await createConfigMaps(clients.admin, namespace, ['a', 'b', 'c'], () => ({ v: 'original' }));
    const controller = await startController({ kubeconfig: clients.kubeconfigs.controller, namespace });
    try {
      await clients.admin.create(patchingEach(namespace, 'three', ['a', 'b', 'c'], { v: 'new' }));
      await waitForPhase(clients.admin, namespace, 'three', 'Committed');
      await clients.admin.patch({ ...cmTarget('b'), namespace }, { data: { v: 'theirs' } }, PatchType.merge);
      await annotate(clients.admin, namespace, 'three', { 'tx.janus.io/request-rollback': 'undo please' });

      const failed = await waitForPhase(clients.admin, namespace, 'three', 'Failed');
      expect(await data(clients.admin, namespace, 'a')).toEqual({ v: 'original' });
      expect(await data(clients.admin, namespace, 'b')).toEqual({ v: 'theirs' });
      expect(await data(clients.admin, namespace, 'c')).toEqual({ v: 'original' });
      expect(failed.status?.items?.map((i) => [i.rolledBack ?? false, i.conflict ?? false])).toEqual([
        [true, false],
        [false, true],
        [true, false],
      ]);
      const stalled = failed.status?.conditions?.find((c) => c.type === 'Stalled');
      expect(stalled).toMatchObject({ status: 'True', reason: 'RollbackConflict' });
      expect(stalled?.message).toContain(`ConfigMap ${namespace}/b`);
      expect(stalled?.message).toContain('janus recover three');
      // Conflicts wait for a human: no automatic retry is scheduled, and nothing keeps writing.
      expect(failed.status?.nextRecoveryAt).toBeUndefined();
      await expect.poll(() => leasesOf(clients.admin, namespace), { timeout: 30_000 }).toEqual([]);
      const settled = await eventually(async () => {
        const txn = await getTxn(clients.admin, namespace, 'three');
        expect(txn.metadata.finalizers ?? []).toEqual([]); // cleanup's last write
        return txn;
      });
      await new Promise((r) => setTimeout(r, 3_000));
      expect((await getTxn(clients.admin, namespace, 'three')).metadata.resourceVersion).toBe(
        settled.metadata.resourceVersion,
      );
    } finally {
      await controller.stop();
    }
  });
});

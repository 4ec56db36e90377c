/**
 * Each change type committed, and each rolled back when a later change fails; failures found
 * before any commit leave everything untouched.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { failAtCommit } from '../../support/cluster/admission.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  cmTarget,
  configMap,
  data,
  fourChanges,
  fourTargets,
  leasesOf,
  serviceAccount,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { type ControllerProcess, startController } from '../../support/processes/controller-process.ts';

const clients = useClients();
const ns = useNamespace(clients, 'saga');
let controller: ControllerProcess;

beforeEach(async () => {
  await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
  controller = await startController({ kubeconfig: clients.kubeconfigs.controller, namespace: ns.name });
});
afterEach(async (ctx) => {
  await controller.stop();
  if (ctx.task.result?.state === 'fail') console.error(await controller.logs());
});

async function fourChangesWithTargets() {
  await fourTargets(clients.admin, ns.name);
  return fourChanges();
}

describe('commit', () => {
  it('applies Create, Update, Patch and Delete, then releases every lock', async () => {
    await clients.admin.create(transaction(ns.name, 'all-types', await fourChangesWithTargets()));
    const txn = await waitForPhase(clients.admin, ns.name, 'all-types', 'Committed');

    expect(await data(clients.admin, ns.name, 'created')).toEqual({ fresh: 'yes' });
    expect(await data(clients.admin, ns.name, 'updated')).toEqual({ new: 'value' });
    expect(await data(clients.admin, ns.name, 'patched')).toEqual({
      kept: 'yes',
      changed: 'after',
      added: 'new',
    });
    expect(await data(clients.admin, ns.name, 'deleted')).toBeUndefined();

    expect(txn.status?.progress).toBe('4/4');
    expect(txn.status?.items?.map((i) => [i.prepared, i.committed, i.rolledBack])).toEqual(
      Array(4).fill([true, true, false]),
    );
    const ready = txn.status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({ status: 'True', reason: 'Committed' });
    expect(txn.status?.conditions?.find((c) => c.type === 'Reconciling')?.status).toBe('False');
    // The rollback store is kept after Committed, for request-rollback.
    expect(await data(clients.admin, ns.name, 'all-types-rollback')).toBeDefined();
    const created = await clients.admin.get({ ...cmTarget('created'), namespace: ns.name });
    expect(created.metadata.annotations?.['tx.janus.io/applied-by']).toMatch(`${ns.name}/all-types@`);

    // Terminal: no lock left, no finalizer left.
    await expect.poll(() => leasesOf(clients.admin, ns.name)).toEqual([]);
    await expect
      .poll(async () => (await clients.admin.get({ ...txnRefOf('all-types') })).metadata.finalizers ?? [])
      .toEqual([]);
  });
});

describe('rollback', () => {
  it('undoes every committed change in reverse order when a later change fails at commit', async () => {
    const changes = await fourChangesWithTargets();
    const removePolicy = await failAtCommit(clients.admin, ns.name, 'refused');
    try {
      changes.push({ target: cmTarget('refused'), type: 'Create', content: { data: { never: 'written' } } });
      await clients.admin.create(transaction(ns.name, 'doomed', changes));
      const txn = await waitForPhase(clients.admin, ns.name, 'doomed', 'RolledBack');

      expect(await data(clients.admin, ns.name, 'created')).toBeUndefined();
      expect(await data(clients.admin, ns.name, 'updated')).toEqual({ old: 'value' });
      // The patch's new key is dropped, the changed one restored, the untouched one kept.
      expect(await data(clients.admin, ns.name, 'patched')).toEqual({ kept: 'yes', changed: 'before' });
      expect(await data(clients.admin, ns.name, 'deleted')).toEqual({ precious: 'data' });
      expect(await data(clients.admin, ns.name, 'refused')).toBeUndefined();

      expect(txn.status?.items?.map((i) => [i.committed, i.rolledBack])).toEqual([
        [true, true],
        [true, true],
        [true, true],
        [true, true],
        [false, false],
      ]);
      expect(txn.status?.items?.[4]?.error).toContain('refused may not be written');
      expect(txn.status?.conditions?.find((c) => c.type === 'RolledBack')?.status).toBe('True');
      await expect.poll(() => leasesOf(clients.admin, ns.name)).toEqual([]);
    } finally {
      await removePolicy();
    }
  });

  it('fails before any commit, changing nothing, when the ServiceAccount may not make a change', async () => {
    await clients.admin.create(configMap(ns.name, 'untouched', { v: '1' }));
    await clients.admin.create(
      transaction(ns.name, 'forbidden', [
        { target: cmTarget('untouched'), type: 'Patch', content: { data: { v: '2' } } },
        {
          target: { apiVersion: 'v1', kind: 'Secret', name: 'not-allowed' },
          type: 'Create',
          content: { stringData: { k: 'v' } },
        },
      ]),
    );
    const txn = await waitForPhase(clients.admin, ns.name, 'forbidden', 'Failed');
    expect(await data(clients.admin, ns.name, 'untouched')).toEqual({ v: '1' });
    const ready = txn.status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready?.message).toContain('Secret');
    expect(ready?.message).toContain('forbidden');
    expect(txn.status?.conditions?.find((c) => c.type === 'Stalled')?.status).toBe('True');
    await expect.poll(() => leasesOf(clients.admin, ns.name)).toEqual([]);
  });

  it('fails with a clear message when the ServiceAccount does not exist', async () => {
    await clients.admin.create(
      transaction(ns.name, 'nobody', [{ target: cmTarget('x'), type: 'Create', content: { data: {} } }], {
        serviceAccountName: 'does-not-exist',
      }),
    );
    const txn = await waitForPhase(clients.admin, ns.name, 'nobody', 'Failed');
    const stalled = txn.status?.conditions?.find((c) => c.type === 'Stalled');
    expect(stalled).toMatchObject({ status: 'True', reason: 'ServiceAccountNotFound' });
    expect(stalled?.message).toContain('"does-not-exist" not found');
    expect(await data(clients.admin, ns.name, 'x')).toBeUndefined();
  });
});

function txnRefOf(name: string) {
  return { apiVersion: 'tx.janus.io/v1alpha1', kind: 'Transaction', name, namespace: ns.name };
}

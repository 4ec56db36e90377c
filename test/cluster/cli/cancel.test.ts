/** `janus cancel` against a real API server and a real controller: the cluster ends as it was. */
import { describe, expect, it } from 'vitest';
import { useClients } from '../../support/cluster/kube.ts';
import {
  configMap,
  data,
  getTxn,
  leasesOf,
  lockHeldElsewhere,
  serviceAccount,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { janus } from '../../support/processes/cli.ts';
import { committedTransaction, useControlledNamespace } from './setup.ts';

const clients = useClients();
const ns = useControlledNamespace(clients, 'cli-cancel');
const as = () => ({ kubeconfig: clients.kubeconfigs.admin });

describe('janus cancel', () => {
  it('stops a transaction waiting for a lock: nothing changed, its locks released, RolledBack', async () => {
    await clients.admin.create(configMap(ns.name, 'locked', { v: '1' }));
    const held = await lockHeldElsewhere(clients.admin, ns.name, 'locked');
    await clients.admin.create(configMap(ns.name, 'free', { v: '1' }));
    await clients.admin.create(
      transaction(ns.name, 'stuck', [
        {
          target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'free' },
          type: 'Patch',
          content: { data: { v: '2' } },
        },
        {
          target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'locked' },
          type: 'Patch',
          content: { data: { v: '2' } },
        },
      ]),
    );
    await eventually(async () => {
      const txn = await getTxn(clients.admin, ns.name, 'stuck');
      expect(txn.status?.conditions?.find((c) => c.type === 'Reconciling')?.reason).toBe('LockWait');
    });

    const result = await janus(
      ['cancel', 'stuck', '-n', ns.name, '--reason', 'wrong release', '--wait'],
      as(),
    );
    expect(result.stderr).toContain(`cancel of ${ns.name}/stuck (Preparing) requested`);
    expect(result.stderr).toContain(`${ns.name}/stuck is RolledBack`);
    expect(result.code).toBe(0);
    const txn = await getTxn(clients.admin, ns.name, 'stuck');
    expect(txn.metadata.annotations ?? {}).not.toHaveProperty('tx.janus.io/cancel');
    expect(txn.status?.conditions?.find((c) => c.type === 'Ready')?.message).toContain(
      'cancelled with the tx.janus.io/cancel annotation: wrong release',
    );
    expect(await data(clients.admin, ns.name, 'free')).toEqual({ v: '1' });
    // Its own Leases are released; the other holder's is untouched.
    await eventually(async () => expect(await leasesOf(clients.admin, ns.name)).toEqual([]));
    const other = await clients.admin.find({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      name: held,
      namespace: ns.name,
    });
    expect((other?.spec as { holderIdentity?: string } | undefined)?.holderIdentity).toBe(
      `${ns.name}/holder/uid-0`,
    );
  });

  it('stops a transaction whose health gate is waiting and undoes its commit', async () => {
    await serviceAccount(clients.admin, ns.name, 'exposer', [
      { apiGroups: [''], resources: ['services'], verbs: ['*'] },
    ]);
    await clients.admin.create(
      transaction(
        ns.name,
        'expose',
        [
          {
            target: { apiVersion: 'v1', kind: 'Service', name: 'public' },
            type: 'Create',
            content: { spec: { type: 'LoadBalancer', selector: { app: 'x' }, ports: [{ port: 80 }] } },
          },
        ],
        { serviceAccountName: 'exposer', health: { timeout: '1h' } },
      ),
    );
    await waitForPhase(clients.admin, ns.name, 'expose', 'Verifying');
    const result = await janus(['cancel', 'expose', '-n', ns.name, '--wait'], as());
    expect(result.code).toBe(0);
    const txn = await getTxn(clients.admin, ns.name, 'expose');
    expect(txn.status?.phase).toBe('RolledBack');
    expect(txn.status?.health).toBeUndefined(); // the check was cut short, not concluded
    expect(
      await clients.admin.find({ apiVersion: 'v1', kind: 'Service', name: 'public', namespace: ns.name }),
    ).toBeUndefined();
  });

  it('refuses a Committed transaction, pointing to janus rollback, and changes nothing', async () => {
    await committedTransaction(clients, ns.name, 'done');
    const result = await janus(['cancel', 'done', '-n', ns.name], as());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`janus rollback done -n ${ns.name}`);
    expect((await getTxn(clients.admin, ns.name, 'done')).status?.phase).toBe('Committed');
  });
});

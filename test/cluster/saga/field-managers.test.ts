/**
 * A Patch changes only what its content names: every transaction applies under a field manager of
 * its own, so two Transactions of the same name (in two namespaces, or one re-created after a
 * delete) never drop each other's fields.
 */
import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import { useClients } from '../../support/cluster/kube.ts';
import {
  annotate,
  cmTarget,
  configMap,
  data,
  grantElsewhere,
  testNamespace,
  transaction,
  txnRef,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { withController } from '../../support/processes/controller-process.ts';

const clients = useClients();

const CONFIGMAPS_HERE_AND_SHARED = [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }];

describe('field managers', () => {
  it('a re-created Transaction of the same name keeps the fields the first one applied', async () => {
    const ns = await testNamespace(clients.admin, 'fm-reuse', { deployer: CONFIGMAPS_HERE_AND_SHARED });
    await clients.admin.create(configMap(ns, 'settings', { base: 'kept' }));
    const patch = (key: string) =>
      transaction(ns, 'deploy', [
        { target: cmTarget('settings'), type: 'Patch', content: { data: { [key]: 'set' } } },
      ]);
    await withController(
      { kubeconfig: clients.kubeconfigs.controller, namespace: ns, logLevel: 'info' },
      async () => {
        await clients.admin.create(patch('first'));
        const first = await waitForPhase(clients.admin, ns, 'deploy', 'Committed');
        await clients.admin.delete(txnRef(ns, 'deploy'));
        await eventually(async () => expect(await clients.admin.find(txnRef(ns, 'deploy'))).toBeUndefined());
        await clients.admin.create(patch('second'));
        const second = await waitForPhase(clients.admin, ns, 'deploy', 'Committed');
        expect(second.metadata.uid).not.toBe(first.metadata.uid);
        expect(second.status?.fieldManager).toBe(`janus:deploy@${second.metadata.uid}`);
        expect(await data(clients.admin, ns, 'settings')).toEqual({
          base: 'kept',
          first: 'set',
          second: 'set',
        });

        // Rolling back the second removes only what it added.
        await annotate(clients.admin, ns, 'deploy', { 'tx.janus.io/request-rollback': 'test' });
        await waitForPhase(clients.admin, ns, 'deploy', 'RolledBack');
        expect(await data(clients.admin, ns, 'settings')).toEqual({ base: 'kept', first: 'set' });
      },
    );
  });

  it("Transactions of the same name in two namespaces patching one object keep each other's fields", async () => {
    const shared = await testNamespace(clients.admin, 'fm-shared');
    const teams = [
      await testNamespace(clients.admin, 'fm-team-a', { deployer: CONFIGMAPS_HERE_AND_SHARED }),
      await testNamespace(clients.admin, 'fm-team-b', { deployer: CONFIGMAPS_HERE_AND_SHARED }),
    ];
    for (const team of teams) {
      await grantElsewhere(
        clients.admin,
        shared,
        { namespace: team, name: 'deployer' },
        CONFIGMAPS_HERE_AND_SHARED,
      );
    }
    await clients.admin.create(configMap(shared, 'routes', { base: 'kept' }));
    for (const [i, team] of teams.entries()) {
      const txn: Transaction = transaction(team, 'publish', [
        { target: cmTarget('routes', shared), type: 'Patch', content: { data: { [`team-${i}`]: 'on' } } },
      ]);
      await clients.admin.create(txn);
      await withController(
        { kubeconfig: clients.kubeconfigs.controller, namespace: team, logLevel: 'info' },
        () => waitForPhase(clients.admin, team, 'publish', 'Committed'),
      );
    }
    expect(await data(clients.admin, shared, 'routes')).toEqual({
      base: 'kept',
      'team-0': 'on',
      'team-1': 'on',
    });
  });
});

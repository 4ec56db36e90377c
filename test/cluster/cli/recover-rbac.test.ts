/**
 * `janus recover --apply` asks, it does not write status: a user with exactly the rights
 * docs/cli.md lists for it, and no right on transactions/status, restores a conflict, and the
 * controller (the only writer of the status) finds it restored and records the rollback.
 */
import { describe, expect, it } from 'vitest';
import { PatchType } from '../../../src/kube/client.ts';
import { useClients } from '../../support/cluster/kube.ts';
import {
  annotate,
  configMap,
  data,
  getTxn,
  grantRole,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { janus } from '../../support/processes/cli.ts';
import { useControlledNamespace } from './setup.ts';

const clients = useClients();
const ns = useControlledNamespace(clients, 'cli-recover-rbac');

describe('janus recover --apply, as a user without transactions/status', () => {
  it('restores the conflict, and the controller ends the transaction RolledBack', async () => {
    await grantRole(
      clients.admin,
      ns.name,
      'recoverer',
      [
        // What docs/cli.md says janus recover --apply needs; nothing on transactions/status.
        { apiGroups: ['tx.janus.io'], resources: ['transactions'], verbs: ['get', 'list', 'watch', 'patch'] },
        { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get'] },
        {
          apiGroups: [''],
          resources: ['serviceaccounts'],
          verbs: ['impersonate'],
          resourceNames: ['deployer'],
        },
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get'] },
        { apiGroups: [''], resources: ['events'], verbs: ['create'] },
      ],
      { kind: 'User', name: clients.users.alice, apiGroup: 'rbac.authorization.k8s.io' },
    );
    await clients.admin.create(configMap(ns.name, 'web', { old: 'value' }));
    await clients.admin.create(
      transaction(ns.name, 'contested', [
        {
          target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'web' },
          type: 'Update',
          content: { data: { new: 'value' } },
        },
      ]),
    );
    await waitForPhase(clients.admin, ns.name, 'contested', 'Committed');
    await clients.admin.patch(
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'web', namespace: ns.name },
      { data: { theirs: 'edit' } },
      PatchType.merge,
    );
    await annotate(clients.admin, ns.name, 'contested', { 'tx.janus.io/request-rollback': 'test' });
    const failed = await waitForPhase(clients.admin, ns.name, 'contested', 'Failed');
    expect(failed.status?.items?.[0]).toMatchObject({ committed: true, conflict: true });

    const result = await janus(['recover', 'contested', '-n', ns.name, '--apply', 'all', '--wait'], {
      kubeconfig: clients.kubeconfigs.alice,
    });
    expect(result.stderr).toMatch(/\[0\] restored: v1 ConfigMap \S+\/web/);
    expect(result.stderr).toContain(`${ns.name}/contested is RolledBack`);
    expect(result.code).toBe(0);

    expect(await data(clients.admin, ns.name, 'web')).toEqual({ old: 'value' });
    const txn = await getTxn(clients.admin, ns.name, 'contested');
    expect(txn.status?.phase).toBe('RolledBack');
    expect(txn.status?.items?.[0]).toMatchObject({
      committed: true,
      rolledBack: true,
      conflict: false,
      error: '',
    });
    // The controller took the request: its condition says who asked, and the annotation is consumed.
    expect(txn.metadata.annotations?.['tx.janus.io/retry-rollback']).toBeUndefined();
    const rolledBack = txn.status?.conditions?.find((c) => c.type === 'RolledBack');
    expect(rolledBack?.message).toContain(
      `retry-rollback annotation: janus recover by ${clients.users.alice}`,
    );
    // Only the controller wrote the status.
    const fields = (txn.metadata.managedFields ?? []) as { manager?: string; subresource?: string }[];
    const statusWriters = fields.filter((f) => f.subresource === 'status').map((f) => f.manager);
    expect(statusWriters.length).toBeGreaterThan(0);
    expect(statusWriters).not.toContain('janus-recover');
  });
});

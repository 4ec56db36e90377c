/** `janus trace`: from a cluster object back to the transaction and Git commit that last wrote it. */
import { describe, expect, it } from 'vitest';
import { PatchType } from '../../../src/kube/client.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { configMap, txnRef } from '../../support/cluster/saga.ts';
import { janus } from '../../support/processes/cli.ts';
import { committedTransaction, useControlledNamespace } from './setup.ts';

const clients = useClients();
const ns = useControlledNamespace(clients, 'cli-trace');
const as = () => ({ kubeconfig: clients.kubeconfigs.admin });

describe('janus trace', () => {
  it('names the transaction, the change and the Git source that last wrote an object', async () => {
    const txn = await committedTransaction(clients, ns.name, 'release');
    // What the Git side records on a Transaction it materializes, for the source line.
    await clients.admin.client.request({
      method: 'PATCH',
      path: `/apis/tx.janus.io/v1alpha1/namespaces/${ns.name}/transactions/release/status`,
      contentType: PatchType.merge,
      body: {
        status: {
          source: {
            repository: 'https://git.example.com/shop.git',
            revision: 'main@sha1:0123456789abcdef0123456789abcdef01234567',
            path: 'transactions/release',
          },
        },
      },
    });

    const result = await janus(['trace', 'configmap/release-b', '-n', ns.name, '-o', 'json'], as());
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      `ConfigMap ${ns.name}/release-b was last written by Transaction ${ns.name}/release, change 1 (Patch).`,
    );
    expect(result.stderr).toContain(
      'source:   https://git.example.com/shop.git transactions/release at main@sha1:0123456789abcdef0123456789abcdef01234567',
    );
    expect(JSON.parse(result.stdout)).toMatchObject({
      object: `ConfigMap ${ns.name}/release-b`,
      appliedBy: {
        namespace: ns.name,
        name: 'release',
        uid: txn.metadata.uid,
        change: 1,
        found: true,
        phase: 'Committed',
        outcome: 'committed',
        resultFile: `results/${ns.name}/release.yaml`,
      },
    });
    // kubectl's other spellings of the type resolve the same way.
    for (const type of ['configmaps', 'cm', 'ConfigMap', 'configmap.core', 'configmaps.']) {
      const other = await janus(['trace', `${type}/release-b`, '-n', ns.name], as());
      expect({ type, code: other.code }).toEqual({ type, code: 0 });
    }
  });

  it('points to the results branch once the Transaction is gone, with exit 3: the stamp cannot be checked', async () => {
    const txn = await committedTransaction(clients, ns.name, 'pruned');
    await clients.admin.delete(txnRef(ns.name, 'pruned'));
    const result = await janus(['trace', 'cm/pruned-a', '-n', ns.name], as());
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('which no longer exists; nothing confirms that Janus wrote it');
    expect(result.stderr).toContain(
      `the outcome is on the results branch: results/${ns.name}/pruned.yaml (its transaction.uid must be ${txn.metadata.uid})`,
    );
  });

  it('exits 1 for an object no transaction wrote, and 2 for one that does not exist or a bad type', async () => {
    await clients.admin.create(configMap(ns.name, 'by-hand', { v: '1' }));
    const untouched = await janus(['trace', 'configmap/by-hand', '-n', ns.name], as());
    expect(untouched.code).toBe(1);
    expect(untouched.stderr).toContain('carries no tx.janus.io/applied-by annotation');

    const missing = await janus(['trace', 'configmap/nope', '-n', ns.name], as());
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`ConfigMap ${ns.name}/nope not found`);

    const badType = await janus(['trace', 'gizmo/x', '-n', ns.name], as());
    expect(badType.code).toBe(2);
    expect(badType.stderr).toContain('the server has no resource type "gizmo"');

    const noSlash = await janus(['trace', 'web', '-n', ns.name], as());
    expect(noSlash.code).toBe(2);
    expect(noSlash.stderr).toContain('expected <type>/<name>');
  });
});

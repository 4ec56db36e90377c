/**
 * Issue 21, finding 7: what a tenant's Transactions can make the controller hold is bounded.
 *
 * - Large Transactions: a tenant creates 40 Transactions of 1.4 MiB each (56 MiB in all) before
 *   the controller starts, which runs with a 96 MiB heap. Before, the first LIST read them in one
 *   page and the cache kept every one whole: the controller ran out of heap at start, and again
 *   at every restart. Now pages hold 10 and the cache keeps an unfinished Transaction without
 *   its contents above 64 KiB (read in full when acted on): all 40 commit.
 * - A rollback store's index naming 1,000 parts: before, the rollback fetched (and held) every
 *   object it named, and retried forever on the missing ones with the locks held. Now the index
 *   is refused before anything it names is read, and the rollback ends Failed saying why.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { useClients } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  annotate,
  cmTarget,
  configMap,
  grantRole,
  type Rule,
  testNamespace,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { withController } from '../../support/processes/controller-process.ts';

const clients = useClients();
const MiB = 1024 * 1024;

/** The tenant: may create Transactions in her namespace, running as its deployer. */
async function tenant(ns: string): Promise<void> {
  const rules: Rule[] = [
    { apiGroups: ['tx.janus.io'], resources: ['transactions'], verbs: ['create', 'get', 'patch'] },
    { apiGroups: [''], resources: ['serviceaccounts'], verbs: ['impersonate'], resourceNames: ['deployer'] },
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'update'] },
  ];
  await grantRole(clients.admin, ns, 'tenant', rules, {
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'User',
    name: clients.users.alice,
  });
}

describe('what one tenant can make the controller hold', () => {
  it('commits 40 Transactions of 1.4 MiB each with a controller of 96 MiB of heap', async () => {
    const ns = await testNamespace(clients.admin, 'bulky', { deployer: [ALL_ON_CONFIGMAPS] });
    await tenant(ns);
    const value = 'x'.repeat(0.7 * MiB); // two per Transaction: a ConfigMap holds at most 1 MiB
    const names = Array.from({ length: 40 }, (_, i) => `bulky-${i}`);
    for (const name of names) {
      await clients.alice.create(
        transaction(
          ns,
          name,
          ['a', 'b'].map((half) => ({
            target: cmTarget(`${name}-${half}`),
            type: 'Create' as const,
            content: { data: { v: value } },
          })),
          { timeout: '10m' },
        ),
      );
    }
    await withController(
      {
        kubeconfig: clients.kubeconfigs.controller,
        namespace: ns,
        logLevel: 'info',
        // Two workers: what the test measures is what the controller holds, not what each
        // reconcile in progress handles for a moment (~8 MB for a Transaction this size).
        extraArgs: ['--no-leader-elect', '--concurrency', '2'],
        env: { NODE_OPTIONS: '--max-old-space-size=96' },
      },
      async (controller) => {
        for (const name of names) await waitForPhase(clients.admin, ns, name, 'Committed', 240_000);
        expect(controller.child.exitCode).toBeNull();
      },
    );
  }, 600_000);

  it('fails a rollback whose store index names 1,000 parts, reading none of them', async () => {
    const ns = await testNamespace(clients.admin, 'store-index', { deployer: [ALL_ON_CONFIGMAPS] });
    await tenant(ns);
    await clients.admin.create(configMap(ns, 'app', { v: '1' }));
    await clients.alice.create(
      transaction(ns, 'deploy', [{ target: cmTarget('app'), type: 'Patch', content: { data: { v: '2' } } }]),
    );
    await withController(
      { kubeconfig: clients.kubeconfigs.controller, namespace: ns, logLevel: 'info' },
      async () => {
        await waitForPhase(clients.admin, ns, 'deploy', 'Committed');
        // The tenant, who may update ConfigMaps in her namespace, edits the store's index.
        const store = await clients.alice.get({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: 'deploy-rollback',
          namespace: ns,
        });
        const parts = Array.from({ length: 1000 }, (_, i) => i);
        const index = {
          version: 1,
          configMaps: 1000,
          secrets: 0,
          items: { '0': { kind: 'ConfigMap', parts } },
        };
        const data = { ...(store.data as Record<string, string>), 'index.json': JSON.stringify(index) };
        await clients.alice.replace({ ...store, data } as KubeObject);
        await annotate(clients.alice, ns, 'deploy', { 'tx.janus.io/request-rollback': 'test' });
        const txn = await waitForPhase(clients.admin, ns, 'deploy', 'Failed');
        expect(JSON.stringify(txn.status)).toMatch(
          /rollback stopped: the rollback store ConfigMap \S*deploy-rollback: the rollback store's index.json is not valid: snapshot 0 names 1000 parts; a snapshot has 1 to 16/,
        );
      },
    );
  });
});

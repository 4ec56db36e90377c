/**
 * `kubectl get txn` answers at a glance, as `flux get` does: READY and STATUS from the Ready
 * condition, CHANGES in effect now, the message with -o wide, and `kubectl get janus` lists them.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { useClients } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  annotate,
  cmTarget,
  configMap,
  testNamespace,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { withController } from '../../support/processes/controller-process.ts';

const clients = useClients();
const kube = inject('kube');
const kubectlPath = kube.binDir ? join(kube.binDir, 'kubectl') : 'kubectl';

function kubectl(...args: string[]): string[] {
  const result = spawnSync(kubectlPath, ['--kubeconfig', kube.kubeconfigs.admin, ...args], {
    encoding: 'utf8',
  });
  expect(result.stderr).toBe('');
  return result.stdout
    .trimEnd()
    .split('\n')
    .map((line) => line.split(/\s{2,}/).join(' | '));
}

describe('kubectl get txn', () => {
  it('shows READY, STATUS and CHANGES, the message with -o wide, and is in the janus category', async () => {
    const ns = await testNamespace(clients.admin, 'kubectl-get', { deployer: [ALL_ON_CONFIGMAPS] });
    await clients.admin.create(configMap(ns, 'settings', { mode: 'blue' }));
    await withController(
      { kubeconfig: clients.kubeconfigs.controller, namespace: ns, logLevel: 'info' },
      async () => {
        await clients.admin.create(
          transaction(ns, 'green', [
            { target: cmTarget('settings'), type: 'Patch', content: { data: { mode: 'green' } } },
          ]),
        );
        await waitForPhase(clients.admin, ns, 'green', 'Committed');
        const table = kubectl('get', 'txn', '-n', ns);
        // STABLE: since when the bake window's targets are healthy; none without a window.
        expect(table[0]).toBe('NAME | PHASE | READY | STATUS | CHANGES | STABLE | AGE');
        expect(table[1]).toMatch(/^green \| Committed \| True \| Committed \| 1\/1 \| (<none> \| )?\d+s$/);

        const wide = kubectl('get', 'txn', '-n', ns, '-o', 'wide');
        expect(wide[0]).toBe('NAME | PHASE | READY | STATUS | CHANGES | STABLE | AGE | BAKE | MESSAGE');
        expect(wide[1]).toContain('1/1 changes committed: Patch ConfigMap settings');

        // The janus category holds Transactions and AnalysisTemplates: kubectl names each by its kind.
        expect(kubectl('get', 'janus', '-n', ns)[1]).toMatch(
          /^transaction\.tx\.janus\.io\/green \| Committed \| True \| Committed/,
        );

        // After a rollback, CHANGES counts what is still in effect: none.
        await annotate(clients.admin, ns, 'green', { 'tx.janus.io/request-rollback': 'test' });
        await waitForPhase(clients.admin, ns, 'green', 'RolledBack');
        expect(kubectl('get', 'txn', '-n', ns)[1]).toMatch(
          /^green \| RolledBack \| False \| RolledBack \| 0\/1 \| /,
        );
        // kstatus (Flux health checks) must not read it as healthy: Stalled is True.
        const stalled = kubectl(
          'get',
          'txn',
          'green',
          '-n',
          ns,
          '-o',
          'jsonpath={.status.conditions[?(@.type=="Stalled")].status}',
        );
        expect(stalled).toEqual(['True']);
      },
    );
  });
});

describe('kubectl get sources', () => {
  it('shows the last applied and attempted commits, the outcome and drift, by name or short name', async () => {
    const ns = await testNamespace(clients.admin, 'kubectl-get-src');
    const ref = { apiVersion: 'tx.janus.io/v1alpha1', kind: 'Source', name: 'shop', namespace: ns };
    // As the Git side does: the controller creates the Source and writes its status.
    await clients.controller.create({
      ...ref,
      metadata: { name: 'shop', namespace: ns },
      spec: { path: 'deploy/shop', kustomize: {}, serviceAccountName: 'deployer' },
    });
    const applied = '3f2a9c1'.padEnd(40, '0');
    const attempted = '9b8e7d6'.padEnd(40, '0');
    await clients.controller.patch(
      ref,
      {
        status: {
          lastApplied: { revision: applied, shortRevision: '3f2a9c1', transaction: 'shop-3f2a9c1' },
          lastAttempted: {
            revision: attempted,
            shortRevision: '9b8e7d6',
            transaction: 'shop-9b8e7d6',
            outcome: 'RolledBack',
          },
          drift: { count: 2 },
        },
      },
      'application/merge-patch+json',
      { subresource: 'status' },
    );
    const table = kubectl('get', 'sources', '-n', ns);
    expect(table[0]).toBe('NAME | APPLIED | ATTEMPTED | OUTCOME | DRIFT | AGE');
    expect(table[1]).toMatch(/^shop \| 3f2a9c1 \| 9b8e7d6 \| RolledBack \| 2 \| \d+s$/);
    // The short name lists the same (AGE aside: a second may pass between the two).
    const withoutAge = (rows: string[]) => rows.map((row) => row.replace(/ \| [^|]+$/, ''));
    expect(withoutAge(kubectl('get', 'jsrc', '-n', ns))).toEqual(withoutAge(table));
    expect(kubectl('get', 'janus', '-n', ns)[1]).toMatch(/^source\.tx\.janus\.io\/shop \| 3f2a9c1 /);
  });
});

/**
 * The retention policy on a real API server with its garbage collector: finished Transactions
 * past the policy are deleted with their rollback stores, the newest per namespace stay, a
 * Committed one stays for its rollback window, one a human must act on stays, and `janus
 * rollback` on a pruned one points to the results branch.
 */
import { describe, expect, it } from 'vitest';
import { PatchType } from '../../../src/kube/client.ts';
import { useClients } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  annotate,
  cmTarget,
  configMap,
  testNamespace,
  transaction,
  txnRef,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { janus } from '../../support/processes/cli.ts';
import { withController } from '../../support/processes/controller-process.ts';

const clients = useClients();

const POLICY = [
  '--retain-last',
  '1',
  '--retain-min-age',
  '1s',
  '--rollback-window',
  '6s',
  '--prune-interval',
  '1s',
];

const patch = (target: string, value: string) => ({
  target: cmTarget(target),
  type: 'Patch' as const,
  content: { data: { v: value } },
});

async function exists(ns: string, name: string): Promise<boolean> {
  return (await clients.admin.find(txnRef(ns, name))) !== undefined;
}

async function store(ns: string, name: string): Promise<boolean> {
  return (
    (await clients.admin.find({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: `${name}-rollback`,
      namespace: ns,
    })) !== undefined
  );
}

async function pruneScenario(ns: string): Promise<void> {
  // Rolled back on request: prunable once it is not the newest and a second old.
  await clients.admin.create(transaction(ns, 'rolled-back', [patch('a', '1')]));
  await waitForPhase(clients.admin, ns, 'rolled-back', 'Committed');
  expect(await store(ns, 'rolled-back')).toBe(true);
  await annotate(clients.admin, ns, 'rolled-back', { 'tx.janus.io/request-rollback': 'test' });
  await waitForPhase(clients.admin, ns, 'rolled-back', 'RolledBack');
  // Failed with a change nobody could undo (someone else edited it): a human's to act on.
  await clients.admin.create(transaction(ns, 'conflicted', [patch('b', '1')]));
  await waitForPhase(clients.admin, ns, 'conflicted', 'Committed');
  await clients.admin.patch(
    { apiVersion: 'v1', kind: 'ConfigMap', name: 'b', namespace: ns },
    { data: { v: 'theirs' } },
    PatchType.merge,
  );
  await annotate(clients.admin, ns, 'conflicted', { 'tx.janus.io/request-rollback': 'test' });
  await waitForPhase(clients.admin, ns, 'conflicted', 'Failed');
  // Committed: kept for its rollback window (6s), then pruned.
  await clients.admin.create(transaction(ns, 'committed', [patch('c', '1')]));
  await waitForPhase(clients.admin, ns, 'committed', 'Committed');
  // The newest finished of the namespace: kept whatever its age.
  await clients.admin.create(transaction(ns, 'newest', [patch('d', '1')]));
  await waitForPhase(clients.admin, ns, 'newest', 'Committed');

  await eventually(async () => expect(await exists(ns, 'rolled-back')).toBe(false), {
    timeoutMs: 30_000,
  });
  expect(await exists(ns, 'committed')).toBe(true); // inside its window yet
  await eventually(async () => expect(await store(ns, 'rolled-back')).toBe(false), {
    timeoutMs: 60_000,
  });

  await eventually(async () => expect(await exists(ns, 'committed')).toBe(false), {
    timeoutMs: 30_000,
  });
  expect(await exists(ns, 'conflicted')).toBe(true);
  expect(await exists(ns, 'newest')).toBe(true);
  expect(await store(ns, 'newest')).toBe(true);
  // Still there after more sweeps: never pruned while it needs a human.
  await new Promise((r) => setTimeout(r, 3_000));
  expect(await exists(ns, 'conflicted')).toBe(true);
  // The cluster kept what the transactions did.
  const c = await clients.admin.get({ apiVersion: 'v1', kind: 'ConfigMap', name: 'c', namespace: ns });
  expect(c.data).toEqual({ v: '1' });
}

describe('retention', () => {
  it('prunes by the policy, with the rollback stores, and keeps what it must', async () => {
    const ns = await testNamespace(clients.admin, 'retention', { deployer: [ALL_ON_CONFIGMAPS] });
    for (const name of ['a', 'b', 'c', 'd']) await clients.admin.create(configMap(ns, name, { v: '0' }));
    await withController(
      {
        kubeconfig: clients.kubeconfigs.controller,
        namespace: ns,
        extraArgs: ['--no-leader-elect', ...POLICY],
      },
      async (controller) => {
        try {
          await pruneScenario(ns);
        } catch (error) {
          console.error((await controller.logs()).slice(-20_000));
          throw error;
        }
      },
    );
    const rollback = await janus(['rollback', 'committed', '-n', ns], {
      kubeconfig: clients.kubeconfigs.admin,
    });
    expect(rollback.code).toBe(2);
    expect(rollback.stderr).toContain(`Transaction ${ns}/committed not found`);
    expect(rollback.stderr).toContain(`janus history ${ns}/committed`);
  });

  it('prunes nothing with --no-prune', async () => {
    const ns = await testNamespace(clients.admin, 'retention-off', { deployer: [ALL_ON_CONFIGMAPS] });
    await clients.admin.create(configMap(ns, 'a', { v: '0' }));
    await withController(
      {
        kubeconfig: clients.kubeconfigs.controller,
        namespace: ns,
        extraArgs: ['--no-leader-elect', ...POLICY, '--rollback-window', '1s', '--no-prune'],
      },
      async () => {
        for (const name of ['first', 'second']) {
          await clients.admin.create(transaction(ns, name, [patch('a', name)]));
          await waitForPhase(clients.admin, ns, name, 'Committed');
        }
        await new Promise((r) => setTimeout(r, 4_000));
        expect(await exists(ns, 'first')).toBe(true);
      },
    );
  });
});

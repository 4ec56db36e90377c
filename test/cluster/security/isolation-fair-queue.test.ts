/**
 * One tenant's busy afternoon is that tenant's: namespaces take turns for the controller's
 * workers (src/runtime/work-queue.ts, groupOf). Tried as the busy tenant would: 40 Transactions
 * in one namespace, all there before the controller starts, and one in another namespace that
 * sorts after it (the LIST, and so a first-in-first-out queue, hands it over last). One worker,
 * so the order is the queue's alone. The controller runs as its own installation (an instance
 * label), so it touches no other test's Transactions.
 */
import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import { freshInstance } from '../../support/cluster/instance.ts';
import { useClients } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  cmTarget,
  testNamespace,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { withController } from '../../support/processes/controller-process.ts';

const clients = useClients();
const BUSY = 40;

const createConfigMap = (name: string) => [
  { target: cmTarget(name), type: 'Create' as const, content: { data: { a: '1' } } },
];

describe('namespaces take turns for the workers', () => {
  it('a neighbour’s one Transaction does not wait behind a namespace’s forty', async () => {
    const instance = freshInstance();
    const busy = await testNamespace(clients.admin, 'iso-fair-a', { deployer: [ALL_ON_CONFIGMAPS] });
    const quiet = await testNamespace(clients.admin, 'iso-fair-z', { deployer: [ALL_ON_CONFIGMAPS] });
    for (let i = 0; i < BUSY; i++) {
      await clients.admin.create(transaction(busy, `t${i}`, createConfigMap(`cm-${i}`), { instance }));
    }
    await clients.admin.create(transaction(quiet, 'one', createConfigMap('cm'), { instance }));

    await withController(
      {
        kubeconfig: clients.kubeconfigs.controller,
        logLevel: 'info',
        instance,
        extraArgs: ['--no-leader-elect', '--concurrency', '1'],
      },
      async () => {
        const one = await waitForPhase(clients.admin, quiet, 'one', 'Committed', 180_000);
        const forty = [];
        for (let i = 0; i < BUSY; i++)
          forty.push(await waitForPhase(clients.admin, busy, `t${i}`, 'Committed', 180_000));
        // Compared by the controller's own completion times (milliseconds), not by when we looked.
        const at = (t: Transaction) => Date.parse(t.status?.completedAt ?? '');
        const before = forty.filter((t) => at(t) < at(one)).length;
        // First in, first out, it would commit after all forty; in turns, after a few of them.
        expect(before).toBeLessThan(BUSY / 4);
      },
    );
  }, 420_000);
});

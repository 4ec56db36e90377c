/**
 * `janus ui` with 1,000 Transactions (issue 37): how long the first page takes in a real browser
 * (Debian's Chromium) from opening the printed URL until all 1,000 rows are on screen, and the
 * memory of the `janus ui` process serving it. The Transactions carry a status like a finished
 * one (three changes, conditions, a source), so the rows are what a real list would send.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Transaction } from '../../src/api/v1alpha1/index.ts';
import { PatchType } from '../../src/kube/client.ts';
import { transactionsPath } from '../../src/kube/transactions.ts';
import { launchBrowser } from '../support/browser.ts';
import { transaction } from '../support/cluster/saga.ts';
import { startUi } from '../support/processes/janus-ui.ts';
import type { Bench } from './harness.ts';
import { memoryMiB } from './proc.ts';
import { type Figure, figure } from './stats.ts';

const TRANSACTIONS = 1000;
const PHASES = ['Committed', 'RolledBack', 'Failed', 'Committed', 'Verifying'] as const;

async function createTransactions(bench: Bench, namespace: string): Promise<void> {
  const changes = [0, 1, 2].map((i) => ({
    target: { apiVersion: 'v1', kind: 'ConfigMap', name: `config-${i}` },
    type: 'Patch' as const,
    content: { data: { release: 'v2' } },
  }));
  const now = new Date().toISOString();
  for (let start = 0; start < TRANSACTIONS; start += 25) {
    await Promise.all(
      Array.from({ length: Math.min(25, TRANSACTIONS - start) }, async (_, j) => {
        const n = start + j;
        const name = `release-${String(n).padStart(4, '0')}`;
        const created = (await bench.admin.create(transaction(namespace, name, changes))) as Transaction;
        const phase = PHASES[n % PHASES.length] ?? 'Committed';
        await bench.admin.client.request({
          method: 'PATCH',
          path: transactionsPath(namespace, name, 'status'),
          contentType: PatchType.merge,
          body: {
            metadata: { resourceVersion: created.metadata.resourceVersion },
            status: {
              phase,
              progress: '3/3',
              items: changes.map((c) => ({
                target: `v1 ConfigMap ${namespace}/${c.target.name}`,
                type: c.type,
                prepared: true,
                committed: true,
                rolledBack: phase === 'RolledBack',
              })),
              conditions: [
                {
                  type: 'Ready',
                  status: 'True',
                  reason: phase,
                  message: `${phase}: 3/3`,
                  lastTransitionTime: now,
                },
              ],
              source: {
                repository: 'https://git.example.com/org/deploys',
                path: `transactions/${name}`,
                revision: `main@sha1:${'a'.repeat(40)}`,
              },
            },
          },
        });
      }),
    );
  }
}

export async function ui(bench: Bench, runs: number): Promise<Record<string, Figure>> {
  const namespace = await bench.namespace('ui');
  await createTransactions(bench, namespace);
  const server = await startUi(bench.env.info.kubeconfigs.admin, ['-n', namespace]);
  const browser = await launchBrowser();
  try {
    const pid = server.pid;
    const firstPage: number[] = [];
    for (let run = 0; run < runs; run++) {
      const page = await browser.page();
      const started = performance.now();
      await page.goto(server.url);
      await page
        .locator('#tx-count', { hasText: `${TRANSACTIONS} of ${TRANSACTIONS} Transaction(s)` })
        .waitFor({ timeout: 120_000 });
      firstPage.push(performance.now() - started);
      await page.close();
    }
    // Settled: what it keeps while serving the list (one warm informer of 1,000 Transactions).
    await sleep(2000);
    return {
      [`janus ui, first page with ${TRANSACTIONS} Transactions (URL opened → every row shown, Chromium)`]:
        figure(firstPage, 'ms'),
      [`janus ui with ${TRANSACTIONS} Transactions: resident memory`]: figure([await memoryMiB(pid)], 'MiB'),
      [`janus ui with ${TRANSACTIONS} Transactions: peak resident memory`]: figure(
        [await memoryMiB(pid, 'VmHWM')],
        'MiB',
      ),
    };
  } finally {
    await browser.close();
    await server.stop();
  }
}

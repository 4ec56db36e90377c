/** Resident memory of the controller with 10,000 finished Transactions in the cluster. */
import { cmTarget, transaction } from '../support/cluster/saga.ts';
import { type Bench, timeUntil } from './harness.ts';
import { memoryMiB } from './proc.ts';
import { type Figure, figure } from './stats.ts';

const COUNT = 10_000;

export async function memory(b: Bench, runs: number): Promise<Record<string, Figure>> {
  const ns = await b.namespace('memory');
  await seedFinishedTransactions(b, ns, COUNT);
  const settled: number[] = [];
  const peaks: number[] = [];
  // A controller started afresh each run: it lists all 10,000, then holds them in its cache.
  for (let run = 0; run < runs; run++) {
    const controller = await b.controller(undefined);
    const url = await controller.opsUrl();
    await timeUntil(async () => (await fetch(`${url}/readyz`)).status === 200, 300_000, 200);
    await new Promise((r) => setTimeout(r, 5_000));
    const pid = controller.child.pid ?? 0;
    settled.push(await memoryMiB(pid, 'VmRSS'));
    peaks.push(await memoryMiB(pid, 'VmHWM'));
    await controller.stop();
  }
  return {
    'controller resident memory, 10,000 finished Transactions': figure(settled, 'MiB'),
    'controller peak resident memory while listing them at start': figure(peaks, 'MiB'),
  };
}

/** `count` Transactions of 5 changes in `ns`, each with the status of one Committed long ago. */
export async function seedFinishedTransactions(b: Bench, ns: string, count: number): Promise<void> {
  const txn = (i: number) =>
    transaction(
      ns,
      `done-${i}`,
      Array.from({ length: 5 }, (_, c) => ({
        target: cmTarget(`app-${i}-${c}`),
        type: 'Patch' as const,
        content: { data: { version: `v${i}` } },
      })),
    );
  const statusOf = (name: string) => ({
    phase: 'Committed',
    progress: '5/5',
    startedAt: new Date().toISOString(),
    completedAt: new Date().toISOString(),
    items: Array.from({ length: 5 }, (_, c) => ({
      target: `v1 ConfigMap ${ns}/app-${name}-${c}`,
      type: 'Patch',
      prepared: true,
      committed: true,
      rolledBack: false,
      resourceVersion: '12345',
      committedResourceVersion: '12346',
      lease: `${ns}/janus-lock-configmap-app-${c}-0123456789abcdef`,
    })),
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'Committed',
        message: '5/5 changes committed',
        lastTransitionTime: new Date().toISOString(),
      },
    ],
  });
  for (let start = 0; start < count; start += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - start) }, async (_, k) => {
        const i = start + k;
        await b.admin.create(txn(i));
        await b.admin.patch(
          { apiVersion: 'tx.janus.io/v1alpha1', kind: 'Transaction', name: `done-${i}`, namespace: ns },
          { status: statusOf(String(i)) },
          'application/merge-patch+json',
          { subresource: 'status' },
        );
      }),
    );
  }
}

/**
 * Resident memory of the controller with 10,000 finished Transactions in the cluster.
 * JANUS_BENCH_BASELINE=<checkout>: that build's runs alternate with this one's (harness.ts).
 */
import type { Transaction } from '../../src/api/v1alpha1/index.ts';
import { namespaceInstance } from '../support/cluster/instance.ts';
import { cmTarget, transaction } from '../support/cluster/saga.ts';
import { type Bench, benchBuilds, isReady, timeUntil } from './harness.ts';
import { INSPECTABLE, liveHeapMiB, memoryMiB } from './proc.ts';
import { type Figure, figure } from './stats.ts';

const COUNT = 10_000;

export async function memory(b: Bench, runs: number): Promise<Record<string, Figure>> {
  const ns = await b.namespace('memory');
  await seedFinishedTransactions(b, ns, COUNT);
  const builds = benchBuilds();
  const settled = builds.map((): number[] => []);
  const peaks = builds.map((): number[] => []);
  const heaps = builds.map((): number[] => []);
  // A controller started afresh each run: it lists all 10,000, then holds them in its cache.
  for (let run = 0; run < runs; run++) {
    for (const [i, build] of builds.entries()) {
      // Every namespace's, as an installation's controller: the instance its Transactions carry.
      const controller = await b.controller(undefined, undefined, {
        root: build.root,
        env: INSPECTABLE,
        instance: namespaceInstance(ns),
      });
      const url = await controller.opsUrl();
      await timeUntil(() => isReady(url), 300_000, 200);
      await new Promise((r) => setTimeout(r, 5_000));
      const pid = controller.child.pid ?? 0;
      settled[i]?.push(await memoryMiB(pid, 'VmRSS'));
      peaks[i]?.push(await memoryMiB(pid, 'VmHWM'));
      heaps[i]?.push(await liveHeapMiB(pid, () => controller.logs()));
      await controller.stop();
    }
  }
  const out: Record<string, Figure> = {};
  for (const [i, build] of builds.entries()) {
    const prefix = builds.length > 1 ? `${build.label}: ` : '';
    out[`${prefix}controller resident memory, 10,000 finished Transactions`] = figure(
      settled[i] ?? [],
      'MiB',
    );
    out[`${prefix}controller peak resident memory while listing them at start`] = figure(
      peaks[i] ?? [],
      'MiB',
    );
    out[`${prefix}controller V8 heap in use after a full collection`] = figure(heaps[i] ?? [], 'MiB');
  }
  return out;
}

/** How seeded Transactions look beyond their 5 changes and Committed status. */
export interface SeedOptions {
  /** Annotations of the i-th (e.g. the source annotations of one materialized from Git). */
  annotations?(i: number): Record<string, string>;
  /** When they were committed; default now. */
  completedAt?: Date;
  /** Each one as the API server returned it after its status was written. */
  seeded?(txn: Transaction): void;
}

/** `count` Transactions of 5 changes in `ns`, each with the status of one Committed. */
export async function seedFinishedTransactions(
  b: Bench,
  ns: string,
  count: number,
  options: SeedOptions = {},
): Promise<void> {
  const txn = (i: number) =>
    transaction(
      ns,
      `done-${i}`,
      Array.from({ length: 5 }, (_, c) => ({
        target: cmTarget(`app-${i}-${c}`),
        type: 'Patch' as const,
        content: { data: { version: `v${i}` } },
      })),
      options.annotations ? { annotations: options.annotations(i) } : {},
    );
  const at = (options.completedAt ?? new Date()).toISOString();
  const statusOf = (name: string) => ({
    phase: 'Committed',
    progress: '5/5',
    startedAt: at,
    completedAt: at,
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
        lastTransitionTime: at,
      },
    ],
  });
  for (let start = 0; start < count; start += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, count - start) }, async (_, k) => {
        const i = start + k;
        await b.admin.create(txn(i));
        const written = await b.admin.patch(
          { apiVersion: 'tx.janus.io/v1alpha1', kind: 'Transaction', name: `done-${i}`, namespace: ns },
          { status: statusOf(String(i)) },
          'application/merge-patch+json',
          { subresource: 'status' },
        );
        options.seeded?.(written as unknown as Transaction);
      }),
    );
  }
}

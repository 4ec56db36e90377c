/** 50 concurrent 5-change transactions on disjoint ConfigMaps, at controller concurrency 1 and 16. */
import type { Transaction } from '../../src/api/v1alpha1/index.ts';
import { cmTarget, configMap, transaction } from '../support/saga.ts';
import { type Bench, timeUntil } from './harness.ts';
import { type Figure, figure } from './stats.ts';

const TRANSACTIONS = 50;
const CHANGES = 5;

async function drain(b: Bench, concurrency: number): Promise<number> {
  const ns = await b.namespace(`tp-${concurrency}`);
  const creates: Promise<unknown>[] = [];
  for (let t = 0; t < TRANSACTIONS; t++) {
    for (let c = 0; c < CHANGES; c++)
      creates.push(b.admin.create(configMap(ns, `t${t}-c${c}`, { v: 'old' })));
  }
  await Promise.all(creates);
  const controller = await b.controller(ns, ['--no-leader-elect', `--concurrency=${concurrency}`]);
  const txns: Transaction[] = Array.from({ length: TRANSACTIONS }, (_, t) =>
    transaction(
      ns,
      `t${t}`,
      Array.from({ length: CHANGES }, (_, c) => ({
        target: cmTarget(`t${t}-c${c}`),
        type: 'Patch' as const,
        content: { data: { v: 'new' } },
      })),
    ),
  );
  const started = performance.now();
  await Promise.all(txns.map((t) => b.admin.create(t)));
  await timeUntil(
    async () => {
      const list = await b.admin.list('tx.janus.io/v1alpha1', 'Transaction', ns);
      return (
        list.items.filter((t) => (t.status as { phase?: string } | undefined)?.phase === 'Committed')
          .length === TRANSACTIONS
      );
    },
    600_000,
    50,
  );
  const seconds = (performance.now() - started) / 1000;
  await controller.stop();
  return seconds;
}

export async function throughput(b: Bench, runs: number): Promise<Record<string, Figure>> {
  const out: Record<string, Figure> = {};
  const drains: Record<number, number[]> = { 1: [], 16: [] };
  for (let r = 0; r < runs; r++) for (const c of [1, 16]) drains[c]?.push(await drain(b, c));
  for (const c of [1, 16]) {
    const times = drains[c] ?? [];
    out[`50 × 5-change transactions, concurrency ${c}: time to drain`] = figure(times, 's');
    out[`50 × 5-change transactions, concurrency ${c}: changes per second`] = figure(
      times.map((s) => (TRANSACTIONS * CHANGES) / s),
      'changes/s',
    );
  }
  const speedups = (drains[1] ?? []).map((t1, i) => t1 / (drains[16]?.[i] ?? t1));
  out['speed-up, concurrency 16 over 1'] = figure(speedups, '×');
  return out;
}

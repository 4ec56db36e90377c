/**
 * 50 concurrent 5-change transactions on disjoint ConfigMaps, at controller concurrency 1 and 16:
 * time to drain, and the CPU each process spent on it, which shows where the work is done.
 *
 * On loopback a request costs the API server's CPU and almost no waiting, so on a small machine
 * the drain is bound by CPU at any concurrency. A real API server is a network hop away: the
 * drains are run again with a 5 ms round trip added by the proxy, where waiting dominates and
 * concurrency pays.
 */
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { API_VERSION, PLURAL, type Transaction } from '../../src/api/v1alpha1/index.ts';
import { KubeApiError } from '../../src/kube/errors.ts';
import { cmTarget, configMap, transaction } from '../support/cluster/saga.ts';
import type { Bench } from './harness.ts';
import { cpuMeter } from './proc.ts';
import { type Figure, figure } from './stats.ts';

const TRANSACTIONS = 50;
const CHANGES = 5;
const CONCURRENCIES = [1, 16] as const;
/** Added round trip of the second series: an API server in the same region, a few hops away. */
const REMOTE_ROUND_TRIP_MS = 5;

interface Drain {
  seconds: number;
  /** CPU seconds per process during the drain. */
  cpu: Record<string, number>;
}

async function drain(b: Bench, concurrency: number, roundTripMs = 0): Promise<Drain> {
  const ns = await b.namespace(`tp-${concurrency}`);
  const creates: Promise<unknown>[] = [];
  for (let t = 0; t < TRANSACTIONS; t++) {
    for (let c = 0; c < CHANGES; c++)
      creates.push(b.admin.create(configMap(ns, `t${t}-c${c}`, { v: 'old' })));
  }
  await Promise.all(creates);
  const controller = await b.controller(ns, ['--no-leader-elect', `--concurrency=${concurrency}`]);
  const [etcd, apiserver] = b.env.pids;
  const meter = await cpuMeter({
    'kube-apiserver': apiserver ?? 0,
    etcd: etcd ?? 0,
    controller: controller.child.pid ?? 0,
    'load generator and counting proxy': process.pid,
  });
  // A watch, not polling: a LIST every few milliseconds would load the API server it measures.
  const committed = allCommitted(b, ns);
  b.proxy.setRoundTripMs(roundTripMs);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: TRANSACTIONS }, (_, t) =>
      b.admin.create(
        transaction(
          ns,
          `t${t}`,
          Array.from({ length: CHANGES }, (_, c) => ({
            target: cmTarget(`t${t}-c${c}`),
            type: 'Patch' as const,
            content: { data: { v: 'new' } },
          })),
        ),
      ),
    ),
  );
  await committed;
  const seconds = (performance.now() - started) / 1000;
  b.proxy.setRoundTripMs(0);
  const cpu = await meter.stop();
  await controller.stop();
  return { seconds, cpu };
}

/** Resolves once every Transaction of the namespace is Committed; rejects after 10 minutes. */
async function allCommitted(b: Bench, ns: string): Promise<void> {
  const stop = AbortSignal.timeout(600_000);
  const done = new Set<string>();
  while (!stop.aborted) {
    try {
      // Restarted from the start ('0'): replayed events only re-add names already seen.
      const events = b.admin.client.watch<Transaction>(
        `/apis/${API_VERSION}/namespaces/${ns}/${PLURAL}`,
        { resourceVersion: '0' },
        stop,
      );
      for await (const event of events) {
        if (event.object.status?.phase === 'Committed') done.add(event.object.metadata.name);
        if (done.size === TRANSACTIONS) return;
      }
    } catch (e) {
      // 429 while the API server's watch cache for the CRD is still starting up.
      if (!(e instanceof KubeApiError && e.status === 429)) throw e;
      await sleep(1000);
    }
  }
  throw new Error(`only ${done.size} of ${TRANSACTIONS} transactions committed in 10 minutes`);
}

export async function throughput(b: Bench, runs: number): Promise<Record<string, Figure>> {
  const drains = new Map<number, Drain[]>(CONCURRENCIES.map((c) => [c, []]));
  const remote = new Map<number, Drain[]>(CONCURRENCIES.map((c) => [c, []]));
  // Unmeasured: the API server's first Transactions cost it seconds of one-time work.
  await drain(b, Math.max(...CONCURRENCIES));
  for (let r = 0; r < runs; r++) {
    for (const c of CONCURRENCIES) drains.get(c)?.push(await drain(b, c));
    for (const c of CONCURRENCIES) remote.get(c)?.push(await drain(b, c, REMOTE_ROUND_TRIP_MS));
  }
  const out: Record<string, Figure> = {};
  const label = (c: number) => `${TRANSACTIONS} × ${CHANGES}-change transactions, concurrency ${c}`;
  for (const c of CONCURRENCIES) {
    const runsAt = drains.get(c) ?? [];
    out[`${label(c)}: time to drain`] = figure(
      runsAt.map((d) => d.seconds),
      's',
    );
    out[`${label(c)}: changes per second`] = figure(
      runsAt.map((d) => (TRANSACTIONS * CHANGES) / d.seconds),
      'changes/s',
    );
    for (const name of Object.keys(runsAt[0]?.cpu ?? {})) {
      out[`${label(c)}: CPU of ${name} per transaction`] = figure(
        runsAt.map((d) => ((d.cpu[name] ?? 0) * 1000) / TRANSACTIONS),
        'ms',
      );
    }
  }
  const [low, high] = CONCURRENCIES;
  const at = (series: Map<number, Drain[]>, c: number) => series.get(c) ?? [];
  out[`speed-up, concurrency ${high} over ${low}`] = speedUp(at(drains, low), at(drains, high));
  // No concurrency drains faster than every core busy with the CPU work measured at the higher
  // one: this bounds the speed-up any controller can get on this machine.
  out[`speed-up ceiling on ${cpus().length} cores (drain at ${low} over total CPU at ${high} / cores)`] =
    figure(
      at(drains, low).map((d, i) => {
        const cpu = Object.values(at(drains, high)[i]?.cpu ?? {}).reduce((sum, s) => sum + s, 0);
        return d.seconds / (cpu / cpus().length);
      }),
      '×',
    );
  const remoteLabel = (c: number) => `${label(c)}, ${REMOTE_ROUND_TRIP_MS} ms round trip`;
  for (const c of CONCURRENCIES)
    out[`${remoteLabel(c)}: time to drain`] = figure(
      at(remote, c).map((d) => d.seconds),
      's',
    );
  out[`speed-up with a ${REMOTE_ROUND_TRIP_MS} ms round trip, concurrency ${high} over ${low}`] = speedUp(
    at(remote, low),
    at(remote, high),
  );
  return out;
}

/** Drain time of each run at the lower concurrency over that at the higher one. */
function speedUp(low: Drain[], high: Drain[]): Figure {
  return figure(
    low.map((d, i) => d.seconds / (high[i]?.seconds ?? d.seconds)),
    '×',
  );
}

/**
 * What each of the long-running processes' Node flags costs and wins on the controller's heaviest
 * paths (issue 26; src/cli/node-flags.ts keeps the figures). For each flag set, in alternated
 * rounds on the bench's control plane, a controller started with exactly those flags:
 * - the side-by-side workload (2 rounds of 50 five-change transactions): resident memory 30 s
 *   after, the controller's CPU;
 * - one transaction of 256 changes (the most a Transaction holds): created → Committed, CPU;
 * - a restart over 10,000 finished Transactions: start → ready, CPU, peak and settled memory.
 *
 *   npm run bench -- flags
 *
 * The Git side's heaviest path (the poll of a 400-directory commit) is weighed by poll-once.ts.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { RUN_ENVIRONMENT, RUN_NODE_FLAGS } from '../../src/cli/node-flags.ts';
import { cmTarget, configMap, transaction, txnRef } from '../support/cluster/saga.ts';
import { type ControllerProcess, startController } from '../support/processes/controller-process.ts';
import { type Bench, timeUntil } from './harness.ts';
import { seedFinishedTransactions } from './memory.ts';
import { cpuSeconds, memoryMiB } from './proc.ts';
import { janusWorkload } from './side-by-side.ts';
import { type Figure, figure } from './stats.ts';

const SEMI_SPACE = '--max-semi-space-size=4';

/** Node flags, and the environment a set adds (glibc's malloc reads it at start). */
export interface FlagSet {
  flags: readonly string[];
  env?: Readonly<Record<string, string>>;
}

/**
 * The sets weighed: V8's defaults, then one step at a time towards the flags shipped until issue
 * 26, then janus run's (which runs this controller too). JANUS_BENCH_FLAG_SETS="a|b" weighs only
 * the sets so named.
 */
export const FLAG_SETS: Readonly<Record<string, FlagSet>> = {
  "V8's defaults": { flags: [] },
  [SEMI_SPACE]: { flags: [SEMI_SPACE] },
  [`${SEMI_SPACE} --no-turbofan`]: { flags: [SEMI_SPACE, '--no-turbofan'] },
  'the five flags shipped until issue 26': {
    flags: [SEMI_SPACE, '--optimize-for-size', '--no-sparkplug', '--no-maglev', '--no-turbofan'],
  },
  "janus run's flags and environment": { flags: RUN_NODE_FLAGS, env: RUN_ENVIRONMENT },
  "janus run's flags without its environment": { flags: RUN_NODE_FLAGS },
};

function selectedSets(): [string, FlagSet][] {
  const named = process.env.JANUS_BENCH_FLAG_SETS?.split('|');
  const sets = Object.entries(FLAG_SETS).filter(([name]) => !named || named.includes(name));
  if (sets.length === 0)
    throw new Error(`JANUS_BENCH_FLAG_SETS names none of: ${Object.keys(FLAG_SETS).join(' | ')}`);
  return sets;
}

const BIG = 256;
const FINISHED = 10_000;

interface Sample {
  sideBySide30sMiB: number;
  sideBySideCpuS: number;
  bigCommittedMs: number;
  bigCpuS: number;
  restartReadyMs: number;
  restartCpuS: number;
  restartPeakMiB: number;
  restartSettledMiB: number;
}

async function withController<T>(
  b: Bench,
  namespace: string,
  set: FlagSet,
  body: (c: ControllerProcess, pid: number) => Promise<T>,
): Promise<T> {
  const controller = await startController({
    kubeconfig: b.proxied.controller,
    namespace,
    nodeFlags: set.flags,
    ...(set.env && { env: { ...set.env } }),
    logLevel: 'info',
    extraArgs: ['--no-leader-elect', '--concurrency=16'],
  });
  try {
    await controller.opsUrl();
    return await body(controller, controller.child.pid ?? 0);
  } finally {
    await controller.stop();
  }
}

async function committed(b: Bench, ns: string, name: string): Promise<boolean> {
  const t = await b.admin.get(txnRef(ns, name));
  return (t as { status?: { phase?: string } } | undefined)?.status?.phase === 'Committed';
}

/** One transaction of 256 Patch changes on ConfigMaps: created → Committed, and the CPU it took. */
async function bigTransaction(b: Bench, flags: FlagSet): Promise<{ ms: number; cpuS: number }> {
  const ns = await b.namespace('flags-big');
  await Promise.all(
    Array.from({ length: BIG }, (_, i) => b.admin.create(configMap(ns, `c${i}`, { v: 'old' }))),
  );
  return withController(b, ns, flags, async (_, pid) => {
    await sleep(2_000); // past the start's own work
    const cpu = await cpuSeconds(pid);
    const started = performance.now();
    await b.admin.create(
      transaction(
        ns,
        'big',
        Array.from({ length: BIG }, (_, i) => ({
          target: cmTarget(`c${i}`),
          type: 'Patch' as const,
          content: { data: { v: 'new' } },
        })),
      ),
    );
    await timeUntil(() => committed(b, ns, 'big'), 600_000, 20);
    return { ms: performance.now() - started, cpuS: (await cpuSeconds(pid)) - cpu };
  });
}

/** A controller started over `ns`'s 10,000 finished Transactions: until ready, then 5 s later. */
async function restart(b: Bench, ns: string, flags: FlagSet) {
  const started = performance.now();
  return withController(b, ns, flags, async (controller, pid) => {
    const url = await controller.opsUrl();
    await timeUntil(async () => (await fetch(`${url}/readyz`)).status === 200, 300_000, 50);
    const readyMs = performance.now() - started;
    const cpuS = await cpuSeconds(pid);
    await sleep(5_000);
    return {
      readyMs,
      cpuS,
      peakMiB: await memoryMiB(pid, 'VmHWM'),
      settledMiB: await memoryMiB(pid, 'VmRSS'),
    };
  });
}

async function sample(b: Bench, finishedNs: string, flags: FlagSet): Promise<Sample> {
  const ns = await b.namespace('flags-sbs');
  const sideBySide = await withController(b, ns, flags, (_, pid) => janusWorkload(b.admin, ns, pid));
  const big = await bigTransaction(b, flags);
  const again = await restart(b, finishedNs, flags);
  return {
    sideBySide30sMiB: sideBySide.after30s,
    sideBySideCpuS: sideBySide.cpuSeconds,
    bigCommittedMs: big.ms,
    bigCpuS: big.cpuS,
    restartReadyMs: again.readyMs,
    restartCpuS: again.cpuS,
    restartPeakMiB: again.peakMiB,
    restartSettledMiB: again.settledMiB,
  };
}

export async function nodeFlagsTrade(b: Bench, runs: number): Promise<Record<string, Figure>> {
  const finishedNs = await b.namespace('flags-finished');
  await seedFinishedTransactions(b, finishedNs, FINISHED);
  const sets = selectedSets();
  const samples = new Map<string, Sample[]>(sets.map(([name]) => [name, []]));
  for (let run = 0; run < runs; run++)
    for (const [name, flags] of sets) {
      const s = await sample(b, finishedNs, flags);
      samples.get(name)?.push(s);
      console.error(`flags: run ${run + 1}, ${name}: ${JSON.stringify(s)}`);
    }
  const out: Record<string, Figure> = {};
  for (const [name, list] of samples) {
    const of = (pick: (s: Sample) => number, unit: string) => figure(list.map(pick), unit);
    out[`${name}: side-by-side workload, resident memory 30 s after`] = of((s) => s.sideBySide30sMiB, 'MiB');
    out[`${name}: side-by-side workload, controller CPU`] = of((s) => s.sideBySideCpuS, 's');
    out[`${name}: ${BIG}-change transaction, created → Committed`] = of((s) => s.bigCommittedMs, 'ms');
    out[`${name}: ${BIG}-change transaction, controller CPU`] = of((s) => s.bigCpuS, 's');
    out[`${name}: restart over 10,000 finished Transactions, start → ready`] = of(
      (s) => s.restartReadyMs,
      'ms',
    );
    out[`${name}: restart over 10,000 finished Transactions, CPU until ready`] = of(
      (s) => s.restartCpuS,
      's',
    );
    out[`${name}: restart over 10,000 finished Transactions, peak resident memory`] = of(
      (s) => s.restartPeakMiB,
      'MiB',
    );
    out[`${name}: restart over 10,000 finished Transactions, resident memory 5 s after`] = of(
      (s) => s.restartSettledMiB,
      'MiB',
    );
  }
  return out;
}

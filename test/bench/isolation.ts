/**
 * One tenant's load against another's latency (issue 21): a trivial transaction (one ConfigMap
 * patched) and the leader's Lease renewals, first on an idle controller, then beside 100
 * Deployments the health gate follows at once (pods that never get Ready, so all stay in
 * Verifying). The gate holds a few watches per namespace, not three per Deployment, and requests
 * never wait behind watches (src/kube/connection.ts), so both should look alike.
 */
import type { Change } from '../../src/api/v1alpha1/index.ts';
import { POD_IMAGES } from '../support/cluster/pod-images.ts';
import { configMap, getTxn, testNamespace, transaction } from '../support/cluster/saga.ts';
import { deployment } from '../support/cluster/workloads.ts';
import { type Bench, timeUntil } from './harness.ts';
import { memoryMiB } from './proc.ts';
import { type Figure, figure } from './stats.ts';

const GATED = 100;
/** A trivial transaction that takes longer than this counts as this (the stall it measures). */
const TRIVIAL_TIMEOUT_MS = 300_000;

const DEPLOYER = [
  { apiGroups: [''], resources: ['configmaps'], verbs: ['*'] },
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] },
];

interface Side {
  /** Creation → Committed of each trivial transaction, ms. */
  trivial: number[];
  /** Time between two renewals of the leader Lease seen from outside, ms. */
  renewalGaps: number[];
  /** Watch streams on the namespace's collections the controller opened from the first rollout on. */
  watches: number;
  /** The controller's resident memory at the end, MiB. */
  rssMiB: number;
}

/** Renewals of the leader Lease to watch on each side: about 40 s at one per 2 s. */
const RENEWALS = 20;

/** Samples the Lease's renewTime into `seen` until `stop` aborts; the gaps between renewals. */
async function renewalGaps(b: Bench, name: string, seen: number[], stop: AbortSignal): Promise<number[]> {
  const ref = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', name, namespace: 'janus-system' };
  while (!stop.aborted) {
    const lease = (await b.admin.find(ref)) as { spec?: { renewTime?: string } } | undefined;
    const at = Date.parse(lease?.spec?.renewTime ?? '');
    if (Number.isFinite(at) && seen.at(-1) !== at) seen.push(at);
    await new Promise((r) => setTimeout(r, 200));
  }
  seen.push(Date.now()); // a renewal missing at the end is a gap too
  return seen.slice(1).map((at, i) => at - (seen[i] as number));
}

/**
 * One-ConfigMap transactions, one after another (at least `runs`), until the leader has renewed
 * its Lease RENEWALS times meanwhile (about 40 s).
 */
async function trivialTransactions(b: Bench, ns: string, lease: string, runs: number, label: string) {
  const stop = new AbortController();
  const seen: number[] = [];
  const gaps = renewalGaps(b, lease, seen, stop.signal);
  const trivial: number[] = [];
  const until = performance.now() + TRIVIAL_TIMEOUT_MS;
  for (let r = 0; r < runs || (seen.length <= RENEWALS && performance.now() < until); r++) {
    const name = `trivial-${label}-${r}`;
    const patch: Change = {
      target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings' },
      type: 'Patch',
      content: { data: { run: name } },
    };
    const started = performance.now();
    await b.admin.create(transaction(ns, name, [patch]));
    process.stderr.write(`isolation: ${name} created at ${new Date().toISOString()}\n`);
    try {
      await timeUntil(
        async () => (await getTxn(b.admin, ns, name)).status?.phase === 'Committed',
        TRIVIAL_TIMEOUT_MS,
        10,
      );
      trivial.push(performance.now() - started);
    } catch {
      trivial.push(TRIVIAL_TIMEOUT_MS);
    }
    await new Promise((r) => setTimeout(r, 2_000)); // one every 2 s or so, as a team would
  }
  stop.abort();
  return { trivial, renewalGaps: await gaps };
}

async function side(b: Bench, gated: boolean, runs: number): Promise<Side> {
  const ns = await testNamespace(b.admin, `bench-iso-${gated ? 'gated' : 'idle'}`, { deployer: DEPLOYER });
  await b.admin.create(configMap(ns, 'settings', { run: 'none' }));
  const lease = `janus-${ns}`;
  const controller = await b.controller(ns, ['--leader-elect', `--leader-election-id=${lease}`]);
  try {
    await timeUntil(async () => (await controller.logs()).includes('"msg":"started leading"'), 60_000, 50);
    b.proxy.reset();
    if (gated) {
      await Promise.all(
        Array.from({ length: GATED }, (_, i) =>
          b.admin.create(
            transaction(
              ns,
              `rollout-${i}`,
              [
                {
                  target: { apiVersion: 'apps/v1', kind: 'Deployment', name: `web-${i}` },
                  type: 'Create',
                  content: { spec: deployment(ns, `web-${i}`, POD_IMAGES.neverReady, { replicas: 1 }).spec },
                },
              ],
              { health: { timeout: '30m' } },
            ),
          ),
        ),
      );
      // All of them waiting on the gate before the measure starts (on the old code, most of
      // them would: the first ~20 took the sockets the rest needed).
      await timeUntil(
        async () => {
          const txns = await b.admin.list('tx.janus.io/v1alpha1', 'Transaction', ns);
          return (
            txns.items.filter((t) => (t as { status?: { phase?: string } }).status?.phase === 'Verifying')
              .length >= GATED
          );
        },
        TRIVIAL_TIMEOUT_MS,
        500,
      ).catch(() => undefined);
    }
    const measured = await trivialTransactions(b, ns, lease, runs, gated ? 'gated' : 'idle');
    const watches = b.proxy.requests.filter((r) => r.watch && r.path.includes(`/namespaces/${ns}/`)).length;
    const pid = controller.child.pid;
    return { ...measured, watches, rssMiB: pid === undefined ? 0 : await memoryMiB(pid) };
  } finally {
    await controller.stop();
  }
}

export async function isolation(b: Bench, runs: number): Promise<Record<string, Figure>> {
  const idle = await side(b, false, runs);
  const busy = await side(b, true, runs);
  return {
    'one-ConfigMap transaction, created → Committed, idle controller': figure(idle.trivial, 'ms'),
    [`the same beside ${GATED} gated rollouts in Verifying`]: figure(busy.trivial, 'ms'),
    'leader Lease: time between renewals, idle controller': figure(idle.renewalGaps, 'ms'),
    [`leader Lease: time between renewals beside ${GATED} gated rollouts`]: figure(busy.renewalGaps, 'ms'),
    [`watch streams the health gate opened for ${GATED} gated rollouts in one namespace`]: figure(
      [busy.watches],
      'watches',
    ),
    'controller resident memory, idle': figure([idle.rssMiB], 'MiB'),
    [`controller resident memory beside ${GATED} gated rollouts`]: figure([busy.rssMiB], 'MiB'),
  };
}

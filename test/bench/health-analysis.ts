/**
 * The bake window and its metric analysis, measured: what a baked rollout costs in API requests
 * next to an unbaked one, what an analysed one adds (API requests and Prometheus queries, the
 * latter read from the real Prometheus's own counter), and how long from the first bad sample
 * (an error ratio that climbs in the window) to the transaction RolledBack. Prometheus is the
 * tests' real one (test/support/servers/prometheus.ts), scraping an exporter this process steers every
 * second; the check measures every second.
 */
import type { AnalysisRef, Change, Transaction } from '../../src/api/v1alpha1/index.ts';
import { POD_IMAGES } from '../support/cluster/pod-images.ts';
import { getTxn, leasesOf, testNamespace, transaction } from '../support/cluster/saga.ts';
import { deployment, deploymentState } from '../support/cluster/workloads.ts';
import { type MetricsExporter, startMetricsExporter } from '../support/servers/metrics-exporter.ts';
import { startPrometheus, type TestPrometheus } from '../support/servers/prometheus.ts';
import { type Bench, timeUntil } from './harness.ts';
import { type Figure, figure } from './stats.ts';

const DEPLOYER = [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] }];
const STABLE_FOR = '10s';

const rollout = (image: string): Change => ({
  target: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
  type: 'Patch',
  content: { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } },
});

const errorRatio = (release: string) =>
  `sum(http_requests_total{release="${release}",code=~"5.."}) / sum(http_requests_total{release="${release}"})`;

interface Setup {
  b: Bench;
  prometheus: TestPrometheus;
  exporter: MetricsExporter;
}

const check = (s: Setup, release: string): AnalysisRef => ({
  check: {
    name: 'error-ratio',
    interval: '1s',
    prometheus: { address: s.prometheus.address, query: errorRatio(release), failWhen: 'result > 0.05' },
  },
});

async function shop(b: Bench, label: string): Promise<string> {
  const ns = await testNamespace(b.admin, `bench-bake-${label}`, { deployer: DEPLOYER });
  await b.admin.create(deployment(ns, 'web', POD_IMAGES.ready));
  await timeUntil(async () => (await deploymentState(b.admin, ns, 'web')).available === 2, 120_000, 50);
  return ns;
}

async function settled(b: Bench, ns: string, phase: string): Promise<Transaction> {
  let last: Transaction | undefined;
  await timeUntil(
    async () => {
      last = await getTxn(b.admin, ns, 'baked');
      return (
        last.status?.phase === phase &&
        !last.metadata.finalizers?.length &&
        (await leasesOf(b.admin, ns)).length === 0
      );
    },
    600_000,
    20,
  );
  if (!last) throw new Error('no transaction');
  return last;
}

/** Instant queries Prometheus has answered so far, from its own metrics. */
async function queriesServed(prometheus: TestPrometheus): Promise<number> {
  const text = await (await fetch(`${prometheus.address}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith('prometheus_http_requests_total{') && l.includes('handler="/api/v1/query"'));
  return Number(line?.split(' ').at(-1) ?? 0);
}

/** The controller's flags: allowed to query the bench's Prometheus, as a platform team would. */
const allowPrometheus = (s: Setup) => [
  '--no-leader-elect',
  '--analysis-allowed-addresses',
  s.prometheus.address,
];

/** One healthy 2-replica rollout with `health`: controller requests (watches apart), queries, measurements. */
async function healthyRollout(s: Setup, label: string, health: Transaction['spec']['health']) {
  const ns = await shop(s.b, label);
  const controller = await s.b.controller(ns, allowPrometheus(s));
  s.b.proxy.reset();
  const queriesBefore = await queriesServed(s.prometheus);
  await s.b.admin.create(transaction(ns, 'baked', [rollout(POD_IMAGES.readyAlternative)], { health }));
  const txn = await settled(s.b, ns, 'Committed');
  await new Promise((r) => setTimeout(r, 500));
  const requests = s.b.proxy.requests.filter((r) => !r.watch).length;
  const queries = (await queriesServed(s.prometheus)) - queriesBefore;
  await controller.stop();
  return { requests, queries, measured: txn.status?.health?.analysis?.[0]?.measured ?? 0 };
}

/** Milliseconds from the first bad sample counted (in the window) to RollingBack, and to RolledBack. */
async function badSampleToRolledBack(s: Setup, run: number) {
  const release = `bench-bad-${run}`;
  s.exporter.count({ release, code: '200' }, 100);
  s.exporter.count({ release, code: '500' }, 0);
  const ns = await shop(s.b, `bad-${run}`);
  const controller = await s.b.controller(ns, allowPrometheus(s));
  await s.b.admin.create(
    transaction(ns, 'baked', [rollout(POD_IMAGES.readyAlternative)], {
      health: { timeout: '5m', stableFor: '5m', analysis: [check(s, release)] },
    }),
  );
  // The window is open and the check has passed once: the release looks good so far.
  await timeUntil(
    async () => ((await getTxn(s.b.admin, ns, 'baked')).status?.health?.analysis?.[0]?.measured ?? 0) >= 1,
    300_000,
    20,
  );
  s.exporter.count({ release, code: '500' }, 50);
  const bad = performance.now();
  await timeUntil(
    async () => (await getTxn(s.b.admin, ns, 'baked')).status?.phase !== 'Verifying',
    120_000,
    10,
  );
  const detected = performance.now() - bad;
  await settled(s.b, ns, 'RolledBack');
  const rolledBack = performance.now() - bad;
  await controller.stop();
  return { detected, rolledBack };
}

export async function healthAnalysis(b: Bench, runs: number): Promise<Record<string, Figure>> {
  const exporter = await startMetricsExporter();
  const prometheus = await startPrometheus({ targets: [exporter.target] });
  const s: Setup = { b, prometheus, exporter };
  try {
    exporter.count({ release: 'bench-good', code: '200' }, 100);
    exporter.count({ release: 'bench-good', code: '500' }, 0);
    const plain: Awaited<ReturnType<typeof healthyRollout>>[] = [];
    const baked: Awaited<ReturnType<typeof healthyRollout>>[] = [];
    const analysed: Awaited<ReturnType<typeof healthyRollout>>[] = [];
    const bad: Awaited<ReturnType<typeof badSampleToRolledBack>>[] = [];
    for (let r = 0; r < runs; r++) {
      plain.push(await healthyRollout(s, `plain-${r}`, { timeout: '5m' }));
      baked.push(await healthyRollout(s, `baked-${r}`, { timeout: '5m', stableFor: STABLE_FOR }));
      analysed.push(
        await healthyRollout(s, `analysed-${r}`, {
          timeout: '5m',
          stableFor: STABLE_FOR,
          analysis: [check(s, 'bench-good')],
        }),
      );
      bad.push(await badSampleToRolledBack(s, r));
    }
    return {
      'API requests of a healthy 2-replica rollout, no bake window (watches apart)': figure(
        plain.map((x) => x.requests),
        'requests',
      ),
      [`API requests of the same rollout baked ${STABLE_FOR}`]: figure(
        baked.map((x) => x.requests),
        'requests',
      ),
      [`API requests of the same rollout baked ${STABLE_FOR} with one check every 1s`]: figure(
        analysed.map((x) => x.requests),
        'requests',
      ),
      'measurements the check took in that window': figure(
        analysed.map((x) => x.measured),
        'measurements',
      ),
      'Prometheus instant queries it cost': figure(
        analysed.map((x) => x.queries),
        'queries',
      ),
      'first bad sample counted → rollback started (1s scrape, 1s check)': figure(
        bad.map((x) => x.detected),
        'ms',
      ),
      'first bad sample counted → RolledBack (old version healthy again)': figure(
        bad.map((x) => x.rolledBack),
        'ms',
      ),
    };
  } finally {
    await prometheus.stop();
    await exporter.stop();
  }
}

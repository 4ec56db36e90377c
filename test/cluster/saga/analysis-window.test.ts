/**
 * Metric analysis in the bake window (spec.health.analysis), against a real Prometheus (built
 * from its Go module) scraping an exporter the test controls: a release whose pods are Ready on
 * kwok but whose error ratio climbs inside the window is rolled back, the reason naming the
 * query, the value and the threshold; the same release with its ratio under the threshold
 * commits once the window has gone by; a controller killed (SIGKILL) in the window resumes the
 * checks from the status. The controller runs as its own process, allowed to query this
 * Prometheus alone (--analysis-allowed-addresses).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryPrometheus } from '../../../src/analysis/index.ts';
import type { AnalysisRef, Transaction } from '../../../src/api/v1alpha1/index.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import { getTxn, transaction, waitForPhase } from '../../support/cluster/saga.ts';
import { eventMessage, newImage, webShop, withWebController } from '../../support/cluster/web-shop.ts';
import { availableWith } from '../../support/cluster/workloads.ts';
import { eventually } from '../../support/eventually.ts';
import { startController } from '../../support/processes/controller-process.ts';
import { type MetricsExporter, startMetricsExporter } from '../../support/servers/metrics-exporter.ts';
import { startPrometheus, type TestPrometheus } from '../../support/servers/prometheus.ts';

const clients = useClients();
let exporter: MetricsExporter;
let prometheus: TestPrometheus;

beforeAll(async () => {
  exporter = await startMetricsExporter();
  prometheus = await startPrometheus({ targets: [exporter.target] });
}, 600_000); // a cold cache builds Prometheus first

afterAll(async () => {
  await prometheus?.stop();
  await exporter?.stop();
});

/** The controller's settings: the platform team allows its Prometheus, nothing else. */
const allowPrometheus = () => ({ analysisAllowedAddresses: [prometheus.address] });

/** The controller for `ns`, allowed to query this Prometheus. */
const withController = <T>(ns: string, body: () => Promise<T>) =>
  withWebController(clients, ns, body, allowPrometheus());

/** The error ratio of one release: 5xx over all its requests. */
const errorRatio = (release: string) =>
  `sum(http_requests_total{release="${release}",code=~"5.."}) / sum(http_requests_total{release="${release}"})`;

const errorRatioCheck = (release: string): AnalysisRef => ({
  check: {
    name: 'error-ratio',
    interval: '1s',
    prometheus: { address: prometheus.address, query: errorRatio(release), failWhen: 'result > 0.05' },
  },
});

/** Until Prometheus has scraped the release's series: the checks then measure numbers from the start. */
const scraped = (release: string) =>
  eventually(async () => {
    const value = await queryPrometheus(prometheus.address, errorRatio(release), {});
    expect(value).toBeDefined();
  });

/** Waits until the window is open and the check has measured at least `n` times. */
function measured(ns: string, name: string, n: number): Promise<Transaction> {
  return eventually(
    async () => {
      const txn = await getTxn(clients.admin, ns, name);
      expect(txn.status?.health?.stableSince).toBeDefined();
      expect(txn.status?.health?.analysis?.[0]?.measured ?? 0).toBeGreaterThanOrEqual(n);
      return txn;
    },
    { timeoutMs: 120_000, intervalMs: 100 },
  );
}

describe('metric analysis in the bake window (health.analysis)', () => {
  it('rolls back a Ready release whose error ratio climbs in the window, naming query, value and threshold', async () => {
    const ns = await webShop(clients, 'analysis-bad');
    exporter.count({ release: 'bad', code: '200' }, 100);
    exporter.count({ release: 'bad', code: '500' }, 0); // the series exists: a ratio of 0, not no data
    await scraped('bad');
    await withController(ns, async () => {
      await clients.admin.create(
        transaction(ns, 'release-v2', [newImage(POD_IMAGES.readyAlternative)], {
          // Long enough that the climb surely lands inside it on a loaded machine; the rollback
          // comes at the first failed measurement, not at the window's end.
          health: { stableFor: '2m', analysis: [errorRatioCheck('bad')] },
        }),
      );
      const passing = await measured(ns, 'release-v2', 1);
      expect(passing.status?.phase).toBe('Verifying');
      expect(passing.status?.health?.analysis?.[0]?.measurements?.[0]).toMatchObject({
        phase: 'Passed',
        value: 0,
      });

      exporter.count({ release: 'bad', code: '500' }, 50); // 50 of 150: a ratio of 1/3
      const txn = await waitForPhase(clients.admin, ns, 'release-v2', 'RolledBack', 180_000);
      const failed = await eventMessage(clients, ns, 'AnalysisFailed');
      expect(failed).toMatch(
        /^regressed \d+s into the 2m bake window: analysis: check "error-ratio" failed: /,
      );
      expect(failed).toContain(`query ${JSON.stringify(errorRatio('bad'))} returned 0.333`);
      expect(failed).toContain('the check fails when result > 0.05');
      // The rollback started inside the window, and the old release serves again.
      const opened = Date.parse(passing.status?.health?.stableSince ?? '');
      expect(Date.parse(txn.status?.health?.startedAt ?? '') - opened).toBeLessThan(120_000);
      await availableWith(clients.admin, ns, 'web', POD_IMAGES.ready);
    });
  });

  it('commits the same release, its check from a template, once the window has gone by when its ratio stays under the threshold', async () => {
    const ns = await webShop(clients, 'analysis-good');
    exporter.count({ release: 'good', code: '200' }, 99);
    exporter.count({ release: 'good', code: '500' }, 1);
    await scraped('good');
    await withController(ns, async () => {
      // From a template the platform team owns, read with the controller's own rights.
      await clients.admin.create({
        apiVersion: 'tx.janus.io/v1alpha1',
        kind: 'AnalysisTemplate',
        metadata: { name: 'http-error-ratio', namespace: ns },
        spec: {
          args: [{ name: 'release' }, { name: 'max-ratio', value: '0.05' }],
          checks: [
            {
              name: 'error-ratio',
              interval: '1s',
              prometheus: {
                address: prometheus.address,
                query: errorRatio('{{args.release}}'),
                failWhen: 'result > {{args.max-ratio}}',
              },
            },
          ],
        },
      });
      const analysis = [
        { templateRef: { name: 'http-error-ratio' }, args: [{ name: 'release', value: 'good' }] },
      ];
      await clients.admin.create(
        transaction(ns, 'release-v2', [newImage(POD_IMAGES.readyAlternative)], {
          health: { stableFor: '20s', analysis },
        }),
      );
      const txn = await waitForPhase(clients.admin, ns, 'release-v2', 'Committed', 180_000);
      expect(txn.status?.health?.result).toBe('Healthy');
      const state = txn.status?.health?.analysis?.[0];
      expect(state).toMatchObject({ name: 'error-ratio', failed: 0 });
      expect(state?.measured).toBeGreaterThanOrEqual(2);
      expect(state?.measurements?.at(-1)).toMatchObject({ phase: 'Passed', value: 0.01 });
      const stableSince = Date.parse(txn.status?.health?.stableSince ?? '');
      expect(Date.parse(txn.status?.health?.completedAt ?? '') - stableSince).toBeGreaterThanOrEqual(20_000);
    });
  });

  it('resumes the checks from the status after a kill -9 in the window, and still rolls back', async () => {
    const ns = await webShop(clients, 'analysis-crash');
    exporter.count({ release: 'crash', code: '200' }, 100);
    exporter.count({ release: 'crash', code: '500' }, 0);
    await scraped('crash');
    const first = await startController({
      kubeconfig: clients.kubeconfigs.controller,
      namespace: ns,
      ...allowPrometheus(),
    });
    let before: Transaction;
    try {
      await clients.admin.create(
        transaction(ns, 'release-v2', [newImage(POD_IMAGES.readyAlternative)], {
          health: { stableFor: '2m', analysis: [errorRatioCheck('crash')] },
        }),
      );
      before = await measured(ns, 'release-v2', 2);
    } finally {
      expect(await first.kill()).toBe('SIGKILL');
    }
    const opened = before.status?.health?.stableSince;
    const measuredBefore = before.status?.health?.analysis?.[0]?.measured ?? 0;
    await withController(ns, async () => {
      // The same window, its measurements counted on from the persisted ones.
      const resumed = await measured(ns, 'release-v2', measuredBefore + 1);
      expect(resumed.status?.phase).toBe('Verifying');
      expect(resumed.status?.health?.stableSince).toBe(opened);
      expect(resumed.status?.health?.analysis?.[0]?.failed).toBe(0);

      exporter.count({ release: 'crash', code: '500' }, 50);
      await waitForPhase(clients.admin, ns, 'release-v2', 'RolledBack', 180_000);
      const failed = await eventMessage(clients, ns, 'AnalysisFailed');
      expect(failed).toContain(`query ${JSON.stringify(errorRatio('crash'))} returned 0.333`);
      await availableWith(clients.admin, ns, 'web', POD_IMAGES.ready);
    });
  });

  it('rolls back at the window end a check that never had data: inconclusive does not pass silently', async () => {
    const ns = await webShop(clients, 'analysis-nodata');
    await withController(ns, async () => {
      await clients.admin.create(
        transaction(ns, 'release-v2', [newImage(POD_IMAGES.readyAlternative)], {
          health: { stableFor: '10s', analysis: [errorRatioCheck('never-scraped')] },
        }),
      );
      const txn = await waitForPhase(clients.admin, ns, 'release-v2', 'RolledBack', 180_000);
      expect(txn.status?.phase).toBe('RolledBack');
      const failed = await eventMessage(clients, ns, 'AnalysisFailed');
      expect(failed).toMatch(
        /^regressed \d+s into the 10s bake window: analysis: could not be measured at the end of the bake window: check "error-ratio": query .* returned no data$/,
      );
    });
  });
});

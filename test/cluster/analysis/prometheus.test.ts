/**
 * Metric analysis against a real Prometheus (built from its Go module) scraping an exporter the
 * test controls every second; credentials from a Secret read as the Transaction's ServiceAccount.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type AnalysisPolicy,
  analysisVerdict,
  type MeasureContext,
  measure,
  parseAllowedAddresses,
  resolveChecks,
} from '../../../src/analysis/index.ts';
import type { Measurement } from '../../../src/analysis/measurement.ts';
import type { AnalysisCheck } from '../../../src/api/v1alpha1/analysis.ts';
import { isInvalid, type KubeApiError } from '../../../src/kube/errors.ts';
import type { Objects } from '../../../src/kube/resources.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { serviceAccount } from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { startBearerProxy } from '../../support/servers/bearer-proxy.ts';
import { type MetricsExporter, startMetricsExporter } from '../../support/servers/metrics-exporter.ts';
import { startPrometheus, type TestPrometheus } from '../../support/servers/prometheus.ts';

/** Prometheus's web config holds this user with a bcrypt hash (cost 4) of PASSWORD. */
const USERNAME = 'analysis';
const PASSWORD = 'analysis-password';
const PASSWORD_BCRYPT = '$2a$04$SSnj1jyqHO33qpaGwSCKcuomzAIckNBiQYonHIfbSC0qYM2w0sUCS';
const SECRET = 'prometheus-auth';

const clients = useClients();
const ns = useNamespace(clients, 'analysis', { grantJanus: false });
let exporter: MetricsExporter;
let prometheus: TestPrometheus;

beforeAll(async () => {
  exporter = await startMetricsExporter();
  prometheus = await startPrometheus({
    targets: [exporter.target],
    basicAuth: { username: USERNAME, bcryptHash: PASSWORD_BCRYPT },
  });
  process.stderr.write(`Prometheus ready in ${prometheus.startedInMs} ms\n`);
}, 600_000); // a cold cache builds Prometheus first

afterAll(async () => {
  await prometheus?.stop();
  await exporter?.stop();
});

/** "reader" may get the Secret; "stranger" may read ConfigMaps only. */
beforeEach(async () => {
  await clients.admin.create({
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/basic-auth',
    metadata: { name: SECRET, namespace: ns.name },
    stringData: { username: USERNAME, password: PASSWORD },
  });
  await serviceAccount(clients.admin, ns.name, 'reader', [
    { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: [SECRET] },
  ]);
  await serviceAccount(clients.admin, ns.name, 'stranger', [
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
  ]);
});

const as = (account: string): Objects => clients.admin.as(`system:serviceaccount:${ns.name}:${account}`);

/** The settings a platform team would give: this Prometheus and the exporter may be queried. */
const allowed = (...more: string[]): AnalysisPolicy => ({
  allowedAddresses: parseAllowedAddresses(
    [prometheus.address, `http://${exporter.target}`, ...more].join(','),
  ),
  templateNamespaces: [],
});

/** What a measurement as `account` works with. */
const ctx = (account: string, ...more: string[]): MeasureContext => ({
  namespace: ns.name,
  objects: as(account),
  policy: allowed(...more),
});

/** The error ratio of one release: 5xx over all its requests. */
const errorRatio = (release: string) =>
  `sum(http_requests_total{release="${release}",code=~"5.."}) / sum(http_requests_total{release="${release}"})`;

const check = (query: string, extra: Partial<AnalysisCheck> = {}): AnalysisCheck => ({
  name: 'error-ratio',
  interval: '1s',
  prometheus: {
    address: prometheus.address,
    query,
    failWhen: 'result > 0.05',
    credentials: { basicAuth: { secretRef: { name: SECRET } } },
  },
  ...extra,
});

/** Measures as `account` until Prometheus has scraped the series (a measurement with data). */
const measuredWithData = (c: AnalysisCheck, account = 'reader'): Promise<Measurement> =>
  eventually(async () => {
    const m = await measure(c, ctx(account));
    if (m.phase === 'NoData') throw new Error(`not scraped yet: ${m.message}`);
    return m;
  });

describe('a Prometheus check', () => {
  it('fails a release whose error ratio is over the threshold, naming query, value and threshold', async () => {
    exporter.count({ release: 'bad', code: '200' }, 90);
    exporter.count({ release: 'bad', code: '500' }, 10);
    const c = check(errorRatio('bad'));
    const m = await measuredWithData(c);
    expect(m).toMatchObject({ phase: 'Failed', value: 0.1 });
    const verdict = analysisVerdict(c, [m]);
    expect(verdict.phase).toBe('Failing');
    expect(verdict.message).toBe(
      `check "error-ratio" failed: query ${JSON.stringify(errorRatio('bad'))} returned 0.1, and the check fails when result > 0.05 (1 failed measurement, failure limit 1)`,
    );
  });

  it('passes a release under the threshold', async () => {
    exporter.count({ release: 'good', code: '200' }, 999);
    exporter.count({ release: 'good', code: '500' }, 1);
    const c = check(errorRatio('good'));
    const m = await measuredWithData(c);
    expect(m).toMatchObject({ phase: 'Passed', value: 0.001 });
    expect(analysisVerdict(c, [m]).phase).toBe('Passing');
  });

  it('sees the error ratio climb: passing, then failing', async () => {
    exporter.count({ release: 'climbing', code: '200' }, 100);
    // A 5xx series at 0: without one, the ratio's numerator is empty and the query has no data.
    exporter.count({ release: 'climbing', code: '500' }, 0);
    const c = check(errorRatio('climbing'));
    expect((await measuredWithData(c)).phase).toBe('Passed');
    exporter.count({ release: 'climbing', code: '503' }, 50);
    const failed = await eventually(async () => {
      const m = await measure(c, ctx('reader'));
      if (m.phase !== 'Failed') throw new Error(`not failed yet: ${m.message}`);
      return m;
    });
    expect(failed.value).toBeCloseTo(50 / 150);
  });

  it('is inconclusive when the query finds no series', async () => {
    await measuredWithData(check('up{job="exporter"}')); // Prometheus has scraped at least once
    const c = check(errorRatio('never-deployed'));
    const m = await measure(c, ctx('reader'));
    expect(m.phase).toBe('NoData');
    expect(analysisVerdict(c, [m])).toMatchObject({
      phase: 'Inconclusive',
      message: `check "error-ratio": query ${JSON.stringify(errorRatio('never-deployed'))} returned no data`,
    });
  });

  it('reports a bad PromQL query as an error naming Prometheus and what it said', async () => {
    const query = 'sum(rate(http_requests_total[1m]';
    const m = await measure(check(query), ctx('reader'));
    expect(m.phase).toBe('Error');
    expect(m.message).toContain(
      `check "error-ratio": Prometheus at ${prometheus.address}/ refused query ${JSON.stringify(query)}: bad_data:`,
    );
    expect(analysisVerdict(check(query), [m]).phase).toBe('Inconclusive');
  });

  it('reports a query that returns more than one number as an error saying how to aggregate', async () => {
    exporter.count({ release: 'split', code: '200' }, 1);
    exporter.count({ release: 'split', code: '500' }, 1);
    const query = 'http_requests_total{release="split"}';
    const m = await eventually(async () => {
      const taken = await measure(check(query), ctx('reader'));
      if (taken.phase === 'NoData') throw new Error('not scraped yet');
      return taken;
    });
    expect(m).toMatchObject({
      phase: 'Error',
      message: `check "error-ratio": Prometheus at ${prometheus.address}/: query ${JSON.stringify(query)} returned more than one series; a check needs one number (aggregate it, e.g. with sum() or max())`,
    });
  });

  it('refuses credentials the ServiceAccount may not read, naming it and the Secret', async () => {
    const m = await measure(check('vector(1)'), ctx('stranger'));
    expect(m.phase).toBe('Error');
    expect(m.message).toContain(
      `check "error-ratio": system:serviceaccount:${ns.name}:stranger may not read Secret "${ns.name}/${SECRET}" (a check's credentials are read as the Transaction's ServiceAccount: grant it get on that Secret); the API server said: `,
    );
  });

  it('reads a bearer token from a Secret as the ServiceAccount, and is refused without it', async () => {
    const token = 'a-token-for-the-gateway';
    const basic = `Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`).toString('base64')}`;
    const gateway = await startBearerProxy(prometheus.address, token, basic);
    try {
      await clients.admin.create({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'prometheus-token', namespace: ns.name },
        stringData: { token },
      });
      await serviceAccount(clients.admin, ns.name, 'token-reader', [
        { apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['prometheus-token'] },
      ]);
      const bearer: AnalysisCheck = {
        name: 'through-gateway',
        prometheus: {
          address: gateway.address,
          query: 'vector(0)',
          failWhen: 'result > 0.05',
          credentials: { bearerToken: { secretKeyRef: { name: 'prometheus-token', key: 'token' } } },
        },
      };
      const passed = await measure(bearer, ctx('token-reader', gateway.address));
      expect(passed).toMatchObject({ phase: 'Passed', value: 0 });
      // "reader" may read the basic-auth Secret only: the token stays out of its reach.
      const refused = await measure(bearer, ctx('reader', gateway.address));
      expect(refused.message).toContain(
        `system:serviceaccount:${ns.name}:reader may not read Secret "${ns.name}/prometheus-token"`,
      );
    } finally {
      await gateway.stop();
    }
  });

  it('reads credentials as the ServiceAccount: without them Prometheus refuses', async () => {
    const open = check('vector(0)');
    const { credentials: _, ...withoutCredentials } = open.prometheus ?? {
      address: '',
      query: '',
      failWhen: '',
    };
    const m = await measure({ ...open, prometheus: withoutCredentials }, ctx('stranger'));
    expect(m.message).toBe(
      `check "error-ratio": Prometheus at ${prometheus.address}/ answered 401: it refused the check's credentials, or needs some (credentials.bearerToken or credentials.basicAuth)`,
    );
    expect((await measure(open, ctx('reader'))).phase).toBe('Passed');
  });
});

describe('an AnalysisTemplate', () => {
  const template = (failWhen: string) => ({
    apiVersion: 'tx.janus.io/v1alpha1',
    kind: 'AnalysisTemplate',
    metadata: { name: 'http-error-ratio', namespace: ns.name },
    spec: {
      args: [{ name: 'release' }, { name: 'max-ratio', value: '0.05' }],
      checks: [
        {
          name: 'error-ratio',
          interval: '1s',
          prometheus: {
            address: prometheus.address,
            query: errorRatio('{{args.release}}'),
            failWhen,
            credentials: { basicAuth: { secretRef: { name: SECRET } } },
          },
        },
      ],
    },
  });

  it("is read with the controller's rights, filled with args, and measured as the ServiceAccount", async () => {
    await clients.admin.create(template('result > {{args.max-ratio}}'));
    exporter.count({ release: 'templated', code: '200' }, 80);
    exporter.count({ release: 'templated', code: '500' }, 20);
    const ref = {
      templateRef: { name: 'http-error-ratio' },
      args: [{ name: 'release', value: 'templated' }],
    };
    const [c] = await resolveChecks(ref, ns.name, clients.controller, allowed());
    expect(c?.prometheus).toMatchObject({ query: errorRatio('templated'), failWhen: 'result > 0.05' });
    const m = await measuredWithData(c as AnalysisCheck);
    expect(m).toMatchObject({ phase: 'Failed', value: 0.2 });
    expect(m.message).toBe(
      `query ${JSON.stringify(errorRatio('templated'))} returned 0.2, and the check fails when result > 0.05`,
    );
  });

  it('is refused by the API server when its condition is not result <op> <number or argument>', async () => {
    const refused = await clients.admin.create(template('result > lots')).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isInvalid(refused), String(refused)).toBe(true);
    expect((refused as KubeApiError).serverMessage).toContain('spec.checks[0].prometheus.failWhen');
  });

  it('that does not exist is named', async () => {
    await expect(
      resolveChecks({ templateRef: { name: 'nowhere' } }, ns.name, clients.controller, allowed()),
    ).rejects.toThrow(`AnalysisTemplate "${ns.name}/nowhere" does not exist`);
  });
});

describe('an HTTP check', () => {
  it('passes on 2xx and fails otherwise, naming the URL and the status', async () => {
    const up = await measure(
      { name: 'metrics', http: { url: `http://${exporter.target}/metrics` } },
      ctx('reader'),
    );
    expect(up.phase).toBe('Passed');
    const down = await measure(
      { name: 'missing', http: { url: `http://${exporter.target}/missing` } },
      ctx('reader'),
    );
    expect(down).toMatchObject({
      phase: 'Failed',
      message: `GET http://${exporter.target}/missing answered 404, and the check needs 2xx`,
    });
  });
});

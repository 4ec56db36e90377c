/**
 * Metric analysis in the bake window, killed on entering the check, at the first status write in
 * it, at the last before the verdict (a measurement recorded, or the window opened with one in
 * flight) and at the verdict. The checks' state lives in status.health.analysis alone, so every
 * run must end as the uninterrupted one: Committed once the window has gone by while the check
 * passes; RolledBack (AnalysisFailed) at the first failed measurement. The check is an HTTP one
 * against a listener in the test whose answer is fixed, so each run measures the same thing
 * whenever it looks; the controller is allowed to query it (--analysis-allowed-addresses). Every
 * request of both sagas is killed in memory (test/unit/crash/health-gate.test.ts).
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { Transaction } from '../../src/api/v1alpha1/index.ts';
import { useClients } from '../support/cluster/kube.ts';
import { POD_IMAGES } from '../support/cluster/pod-images.ts';
import { INSIDE_THE_WINDOW, killedAtGatePoints, rollout } from '../support/crash/gate-crash.ts';
import type { PointSpec } from '../support/crash/request-log.ts';

const clients = useClients();
let server: Server;
let base = '';

beforeAll(async () => {
  // /ok answers 200, /failing 503: what a smoke test of a good and a bad release would say.
  server = createServer((req, res) => res.writeHead(req.url === '/ok' ? 200 : 503).end());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  base = `http://127.0.0.1:${address.port}`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** The platform team allows the listener, as it would its smoke-test service. */
const allowed = () => ['--analysis-allowed-addresses', base];

const analysed = (path: string, stableFor: string): Transaction['spec']['health'] => ({
  timeout: '2m',
  stableFor,
  analysis: [{ check: { name: 'smoke', interval: '2s', http: { url: `${base}${path}` } } }],
});

const POINTS: PointSpec[] = [
  {
    name: 'first write in the check',
    phase: 'Verifying',
    method: 'PATCH',
    path: '/transactions/gated/status',
  },
  INSIDE_THE_WINDOW,
];

describe('metric analysis in the bake window, killed at its steps', () => {
  it(
    'a check that passes: Committed once the window has gone by, every measurement kept',
    { timeout: 1_800_000 },
    () =>
      killedAtGatePoints(
        clients,
        'analysis-ok',
        {
          ...rollout(clients, POD_IMAGES.readyAlternative, 'Committed', analysed('/ok', '8s')),
          controllerArgs: allowed(),
        },
        {
          deployment: { image: POD_IMAGES.readyAlternative, available: 2, updated: 2, replicas: 2 },
          config: { release: 'v2' },
        },
        POINTS,
      ),
  );

  it(
    'a check that fails: RolledBack at the first failed measurement, the old version running',
    { timeout: 1_800_000 },
    () =>
      killedAtGatePoints(
        clients,
        'analysis-bad',
        {
          ...rollout(clients, POD_IMAGES.readyAlternative, 'RolledBack', analysed('/failing', '1m')),
          controllerArgs: allowed(),
        },
        {
          deployment: { image: POD_IMAGES.ready, available: 2, updated: 2, replicas: 2 },
          config: { release: 'v1' },
        },
        POINTS,
      ),
  );
});

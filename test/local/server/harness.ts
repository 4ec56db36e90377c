import { afterEach } from 'vitest';
import { Metrics } from '../../../src/metrics/index.ts';
import type { CheckResult, HealthChecks, OpsServer } from '../../../src/server/index.ts';
import { startOpsServer } from '../../../src/server/index.ts';
import type { WebhookRequestHandler } from '../../../src/webhook/index.ts';

/** Health state a test flips; the server's checks read it on every probe. */
export interface HealthState {
  live: CheckResult;
  ready: Record<string, CheckResult>;
}

export interface TestOpsServer {
  readonly server: OpsServer;
  readonly url: string;
  readonly metrics: Metrics;
  readonly health: HealthState;
}

const OK: CheckResult = { ok: true, detail: '' };

/** An ops server on 127.0.0.1:0 with all checks passing until the test says otherwise. */
export async function startTestServer(
  options: { metrics?: Metrics; webhook?: WebhookRequestHandler } = {},
): Promise<TestOpsServer> {
  const metrics = options.metrics ?? new Metrics();
  const health: HealthState = {
    live: OK,
    ready: { 'informers-synced': OK, 'leader-or-standby': OK, 'git-reachable': OK },
  };
  const checks: HealthChecks = {
    live: () => health.live,
    ready: Object.keys(health.ready).map((name) => ({ name, check: () => health.ready[name] ?? OK })),
  };
  const server = await startOpsServer({
    port: 0,
    host: '127.0.0.1',
    metrics,
    health: checks,
    webhook: options.webhook,
  });
  return { server, url: server.url, metrics, health };
}

/** A `start` for one test file: every server it starts is closed after each test. */
export function serversClosedAfterEach(): typeof startTestServer {
  const running: TestOpsServer[] = [];
  afterEach(async () => {
    await Promise.all(running.splice(0).map(({ server }) => server.close()));
  });
  return async (options) => {
    const started = await startTestServer(options);
    running.push(started);
    return started;
  };
}

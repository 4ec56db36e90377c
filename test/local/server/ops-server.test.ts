import { describe, expect, it } from 'vitest';
import { startOpsServer } from '../../../src/server/index.ts';
import { parseExposition } from '../../unit/metrics/exposition.ts';
import { sampleValue } from '../../unit/metrics/query.ts';
import { serversClosedAfterEach } from './harness.ts';

const start = serversClosedAfterEach();

describe('startOpsServer', () => {
  it('listens on the port it was given, or a free one for port 0', async () => {
    const { url } = await start();

    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9][0-9]*$/);
  });

  it('rejects when the port is taken', async () => {
    const { url, metrics } = await start();
    const port = Number(new URL(url).port);

    const second = startOpsServer({
      port,
      host: '127.0.0.1',
      metrics,
      health: { live: () => ({ ok: true, detail: '' }), ready: [] },
    });

    await expect(second).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});

describe('GET /metrics', () => {
  it('serves the registry in the Prometheus text format with its content type', async () => {
    const { url, metrics } = await start();
    metrics.setLeader(true);

    const res = await fetch(`${url}/metrics`);

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(metrics.contentType);
    expect(
      sampleValue(parseExposition(await res.text()), 'janus_leader', {
        lease: 'janus-system/janus-controller',
      }),
    ).toBe(1);
  });

  it('answers 500 rather than a partial scrape when collecting fails', async () => {
    const { url, metrics } = await start();
    metrics.readActiveTransactionsFrom(() => {
      throw new Error('informer cache gone');
    });

    const res = await fetch(`${url}/metrics`);

    expect(res.status).toBe(500);
    expect(await res.text()).toBe('collecting metrics failed\n');
  });

  it('refuses methods other than GET and HEAD with 405', async () => {
    const { url } = await start();

    const res = await fetch(`${url}/metrics`, { method: 'POST' });

    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
  });
});

describe('GET /healthz', () => {
  it('answers 200 while the liveness check passes', async () => {
    const { url } = await start();

    const res = await fetch(`${url}/healthz`);

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await res.text()).toBe('[+]live ok\nhealthz check passed\n');
  });

  it('answers 503 with the reason when it fails, on /healthz and /livez', async () => {
    const { url, health } = await start();
    health.live = { ok: false, detail: 'reconcile loop stalled for 300s' };

    const healthz = await fetch(`${url}/healthz`);
    const livez = await fetch(`${url}/livez`);

    expect(healthz.status).toBe(503);
    expect(await healthz.text()).toBe(
      '[-]live failed: reconcile loop stalled for 300s\nhealthz check failed\n',
    );
    expect(livez.status).toBe(503);
  });
});

describe('GET /readyz', () => {
  it('answers 200 listing every check when all pass', async () => {
    const { url } = await start();

    const res = await fetch(`${url}/readyz`);

    expect(res.status).toBe(200);
    expect(await res.text()).toBe(
      '[+]informers-synced ok\n[+]leader-or-standby ok\n[+]git-reachable ok\nreadyz check passed\n',
    );
  });

  it('answers 503 naming the failing check', async () => {
    const { url, health } = await start();
    health.ready['git-reachable'] = { ok: false, detail: 'last successful poll 10m ago' };

    const res = await fetch(`${url}/readyz`);

    expect(res.status).toBe(503);
    const lines = (await res.text()).split('\n');
    expect(lines).toContain('[-]git-reachable failed: last successful poll 10m ago');
    expect(lines).toContain('[+]informers-synced ok');
    expect(lines).toContain('readyz check failed');
  });

  it('answers HEAD with the status and no body', async () => {
    const { url, health } = await start();
    health.ready['informers-synced'] = { ok: false, detail: 'not synced' };

    const res = await fetch(`${url}/readyz`, { method: 'HEAD' });

    expect(res.status).toBe(503);
    expect(await res.text()).toBe('');
  });
});

describe('other paths', () => {
  it.each(['/', '/metrics/extra', '/readyz/verbose', '/webhookx'])('answers 404 for %s', async (path) => {
    const { url } = await start();

    const res = await fetch(`${url}${path}`);

    expect(res.status).toBe(404);
  });

  it('ignores the query string', async () => {
    const { url } = await start();

    const res = await fetch(`${url}/readyz?verbose`);

    expect(res.status).toBe(200);
  });
});

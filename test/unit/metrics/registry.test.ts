import { register as globalRegistry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/metrics/index.ts';
import { sampleValue, scrape } from './query.ts';

describe('the registry', () => {
  it('is private to each Metrics, so two instances neither clash nor share values', async () => {
    const first = new Metrics();
    const second = new Metrics();

    first.gitPush('success');

    const count = async (m: Metrics) =>
      sampleValue(await scrape(m), 'janus_git_pushes_total', { result: 'success' });
    expect(await count(first)).toBe(1);
    expect(await count(second)).toBe(0);
    expect(globalRegistry.getSingleMetric('janus_git_pushes_total')).toBeUndefined();
  });

  it('adds the process and Node.js metrics with the janus_ prefix only when asked', async () => {
    const names = async (m: Metrics) => [...(await scrape(m)).keys()];

    const plain = await names(new Metrics());
    const withDefaults = await names(new Metrics({ defaultMetrics: true }));

    expect(plain).not.toContain('janus_process_cpu_seconds_total');
    expect(withDefaults).toContain('janus_process_cpu_seconds_total');
    expect(withDefaults).toContain('janus_nodejs_eventloop_lag_seconds');
    expect(withDefaults.every((name) => name.startsWith('janus_'))).toBe(true);
  });
});

describe('recording methods', () => {
  it('work when passed on as callbacks, detached from the instance', async () => {
    const metrics = new Metrics();
    const { lockOperation, webhookRequest, setLeader } = metrics;

    lockOperation('release', 'error');
    webhookRequest('generic', 'ping');
    setLeader(true);

    const exposition = await scrape(metrics);
    expect(
      sampleValue(exposition, 'janus_lock_operations_total', { operation: 'release', result: 'error' }),
    ).toBe(1);
    expect(
      sampleValue(exposition, 'janus_webhook_requests_total', { provider: 'generic', outcome: 'ping' }),
    ).toBe(1);
    expect(sampleValue(exposition, 'janus_leader', { lease: 'janus-system/janus-controller' })).toBe(1);
  });
});

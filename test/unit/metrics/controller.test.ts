import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/metrics/index.ts';
import { histogramOf, sampleValue, scrape } from './query.ts';

describe('reconcile metrics', () => {
  it('count reconciles by result from zero and time every one', async () => {
    const metrics = new Metrics();

    metrics.reconcile('requeue', 0.1);
    metrics.reconcile('requeue', 0.2);
    metrics.reconcile('error', 0.3);

    const exposition = await scrape(metrics);
    expect(sampleValue(exposition, 'janus_reconcile_total', { result: 'requeue' })).toBe(2);
    expect(sampleValue(exposition, 'janus_reconcile_total', { result: 'error' })).toBe(1);
    expect(sampleValue(exposition, 'janus_reconcile_total', { result: 'success' })).toBe(0);
    const duration = histogramOf(exposition, 'janus_reconcile_duration_seconds');
    expect(duration.count).toBe(3);
    expect(duration.sum).toBeCloseTo(0.6);
  });
});

describe('janus_leader', () => {
  it('is 0 until leading, 1 while leading, and 0 again after losing the lease', async () => {
    const metrics = new Metrics();
    const leader = async () =>
      sampleValue(await scrape(metrics), 'janus_leader', { lease: 'janus-system/janus-controller' });

    const before = await leader();
    metrics.setLeader(true);
    const leading = await leader();
    metrics.setLeader(false);
    const after = await leader();

    expect([before, leading, after]).toEqual([0, 1, 0]);
  });
});

describe('janus_leader of several installations', () => {
  it('is labelled with the leader Lease, so exactly one leader is counted per installation', async () => {
    const blue = new Metrics({ leaderLease: 'janus-system/janus-controller-blue' });
    blue.setLeader(true);
    const exposition = await scrape(blue);
    expect(sampleValue(exposition, 'janus_leader', { lease: 'janus-system/janus-controller-blue' })).toBe(1);
    expect(
      sampleValue(exposition, 'janus_leader', { lease: 'janus-system/janus-controller' }),
    ).toBeUndefined();
  });
});

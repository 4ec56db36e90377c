import { describe, expect, it } from 'vitest';
import { PHASES } from '../../../src/api/v1alpha1/index.ts';
import { ITEM_OPERATIONS, LOCK_OPERATIONS, Metrics, OPERATION_RESULTS } from '../../../src/metrics/index.ts';
import { bucketCount, histogramOf, samplesOf, sampleValue, scrape } from './query.ts';

describe('phase transitions', () => {
  it('counts each (from, to) pair separately', async () => {
    const metrics = new Metrics();

    metrics.transition('Pending', 'Preparing');
    metrics.transition('Pending', 'Preparing');
    metrics.transition('Committing', 'RollingBack');

    const exposition = await scrape(metrics);
    const name = 'janus_transaction_phase_transitions_total';
    expect(sampleValue(exposition, name, { from_phase: 'Pending', to_phase: 'Preparing' })).toBe(2);
    expect(sampleValue(exposition, name, { from_phase: 'Committing', to_phase: 'RollingBack' })).toBe(1);
    expect(samplesOf(exposition, name)).toHaveLength(2);
  });
});

describe('transaction duration', () => {
  it('observes by outcome into buckets from 0.05 s to about an hour', async () => {
    const metrics = new Metrics();

    metrics.transactionFinished('RolledBack', 0.04);
    metrics.transactionFinished('RolledBack', 90);

    const exposition = await scrape(metrics);
    const rolledBack = histogramOf(exposition, 'janus_transaction_duration_seconds', {
      outcome: 'RolledBack',
    });
    expect(rolledBack.count).toBe(2);
    expect(rolledBack.sum).toBeCloseTo(90.04);
    expect(bucketCount(rolledBack, 0.05)).toBe(1);
    const bounds = rolledBack.buckets.map(([le]) => le).filter(Number.isFinite);
    expect(bounds[0]).toBe(0.05);
    expect(bounds.at(-1)).toBeGreaterThanOrEqual(1800);
    expect(bounds.at(-1)).toBeLessThanOrEqual(7200);
  });

  it('has a zero series for every outcome before any transaction ends', async () => {
    const exposition = await scrape(new Metrics());

    for (const outcome of ['Committed', 'RolledBack', 'Failed']) {
      expect(histogramOf(exposition, 'janus_transaction_duration_seconds', { outcome }).count).toBe(0);
    }
  });
});

describe('active transactions', () => {
  const active = 'janus_transactions_active';

  it('reports exactly the counts set, and zero for every other phase', async () => {
    const metrics = new Metrics();

    metrics.setActiveTransactions({ Preparing: 2, Committed: 7 });

    const exposition = await scrape(metrics);
    expect(samplesOf(exposition, active)).toHaveLength(PHASES.length);
    for (const phase of PHASES) {
      const expected = phase === 'Preparing' ? 2 : phase === 'Committed' ? 7 : 0;
      expect(sampleValue(exposition, active, { phase })).toBe(expected);
    }
  });

  it('drops a phase that disappeared from the next counts to zero', async () => {
    const metrics = new Metrics();
    metrics.setActiveTransactions({ Committing: 3 });

    metrics.setActiveTransactions({ RollingBack: 1 });

    const exposition = await scrape(metrics);
    expect(sampleValue(exposition, active, { phase: 'Committing' })).toBe(0);
    expect(sampleValue(exposition, active, { phase: 'RollingBack' })).toBe(1);
  });

  it('can read the counts at scrape time from a source', async () => {
    const metrics = new Metrics();
    let counts: Partial<Record<(typeof PHASES)[number], number>> = { Pending: 4 };
    metrics.readActiveTransactionsFrom(() => counts);

    const first = await scrape(metrics);
    counts = { Prepared: 1 };
    const second = await scrape(metrics);

    expect(sampleValue(first, active, { phase: 'Pending' })).toBe(4);
    expect(sampleValue(second, active, { phase: 'Pending' })).toBe(0);
    expect(sampleValue(second, active, { phase: 'Prepared' })).toBe(1);
  });
});

describe('item and lock operations', () => {
  it('start every (operation, result) series at zero and count each call', async () => {
    const metrics = new Metrics();

    metrics.itemOperation('dryrun', 'error');
    metrics.lockOperation('takeover', 'success');
    metrics.lockOperation('takeover', 'success');

    const exposition = await scrape(metrics);
    const items = 'janus_item_operations_total';
    const locks = 'janus_lock_operations_total';
    expect(samplesOf(exposition, items)).toHaveLength(ITEM_OPERATIONS.length * OPERATION_RESULTS.length);
    expect(samplesOf(exposition, locks)).toHaveLength(LOCK_OPERATIONS.length * OPERATION_RESULTS.length);
    expect(sampleValue(exposition, items, { operation: 'dryrun', result: 'error' })).toBe(1);
    expect(sampleValue(exposition, items, { operation: 'commit', result: 'success' })).toBe(0);
    expect(sampleValue(exposition, locks, { operation: 'takeover', result: 'success' })).toBe(2);
    expect(sampleValue(exposition, locks, { operation: 'wait', result: 'conflict' })).toBe(0);
  });
});

describe('item count', () => {
  it('uses the buckets 1, 2, 5, 10, 20, 50, 100, 256, 512', async () => {
    const metrics = new Metrics();

    metrics.itemCount(3);
    metrics.itemCount(256);
    metrics.itemCount(512);

    const series = histogramOf(await scrape(metrics), 'janus_transaction_item_count');
    expect(series.buckets.map(([le]) => le)).toEqual([
      1,
      2,
      5,
      10,
      20,
      50,
      100,
      256,
      512,
      Number.POSITIVE_INFINITY,
    ]);
    expect(bucketCount(series, 2)).toBe(0);
    expect(bucketCount(series, 5)).toBe(1);
    expect(bucketCount(series, 100)).toBe(1);
    expect(bucketCount(series, 256)).toBe(2);
    expect(bucketCount(series, 512)).toBe(3);
  });
});

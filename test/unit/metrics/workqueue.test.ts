import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/metrics/index.ts';
import { bucketCount, histogramOf, sampleValue, scrape } from './query.ts';

describe('work queue metrics', () => {
  it('show a queue at zero as soon as its adapter exists', async () => {
    const metrics = new Metrics();

    metrics.workQueueMetrics('transactions');

    const exposition = await scrape(metrics);
    const name = { name: 'transactions' };
    expect(sampleValue(exposition, 'janus_workqueue_depth', name)).toBe(0);
    expect(sampleValue(exposition, 'janus_workqueue_adds_total', name)).toBe(0);
    expect(sampleValue(exposition, 'janus_workqueue_retries_total', name)).toBe(0);
    expect(sampleValue(exposition, 'janus_workqueue_longest_running_processor_seconds', name)).toBe(0);
    expect(histogramOf(exposition, 'janus_workqueue_queue_duration_seconds', name).count).toBe(0);
    expect(histogramOf(exposition, 'janus_workqueue_work_duration_seconds', name).count).toBe(0);
  });

  it('record each call under the queue name, without mixing queues', async () => {
    const metrics = new Metrics();
    const transactions = metrics.workQueueMetrics('transactions');
    const results = metrics.workQueueMetrics('results');

    transactions.add();
    transactions.add();
    transactions.depth(2);
    transactions.retry();
    transactions.queueLatency(0.5);
    transactions.workDuration(2);
    transactions.longestRunning(12.5);
    results.add();

    const exposition = await scrape(metrics);
    const name = { name: 'transactions' };
    expect(sampleValue(exposition, 'janus_workqueue_adds_total', name)).toBe(2);
    expect(sampleValue(exposition, 'janus_workqueue_adds_total', { name: 'results' })).toBe(1);
    expect(sampleValue(exposition, 'janus_workqueue_depth', name)).toBe(2);
    expect(sampleValue(exposition, 'janus_workqueue_retries_total', name)).toBe(1);
    expect(sampleValue(exposition, 'janus_workqueue_longest_running_processor_seconds', name)).toBe(12.5);
    const queued = histogramOf(exposition, 'janus_workqueue_queue_duration_seconds', name);
    expect([queued.count, queued.sum, bucketCount(queued, 1)]).toEqual([1, 0.5, 1]);
    const worked = histogramOf(exposition, 'janus_workqueue_work_duration_seconds', name);
    expect([worked.count, worked.sum, bucketCount(worked, 1), bucketCount(worked, 10)]).toEqual([1, 2, 0, 1]);
  });
});

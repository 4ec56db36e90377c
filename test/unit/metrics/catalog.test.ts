import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/metrics/index.ts';
import type { MetricType } from './exposition.ts';
import { family, labelNamesOf, scrape } from './query.ts';

/** Every metric of SPEC §6 and docs/metrics.md: name, type, label names. */
const CATALOG: ReadonlyArray<readonly [string, MetricType, readonly string[]]> = [
  ['janus_transaction_phase_transitions_total', 'counter', ['from_phase', 'to_phase']],
  ['janus_transaction_duration_seconds', 'histogram', ['outcome']],
  ['janus_transactions_active', 'gauge', ['phase']],
  ['janus_item_operations_total', 'counter', ['operation', 'result']],
  ['janus_lock_operations_total', 'counter', ['operation', 'result']],
  ['janus_transaction_item_count', 'histogram', []],
  ['janus_health_check_duration_seconds', 'histogram', ['check', 'result']],
  ['janus_analysis_measurements_total', 'counter', ['result']],
  ['janus_analysis_measurements_in_flight', 'gauge', ['state']],
  ['janus_transactions_pruned_total', 'counter', []],
  ['janus_git_polls_total', 'counter', ['result']],
  ['janus_git_poll_duration_seconds', 'histogram', []],
  ['janus_git_pushes_total', 'counter', ['result']],
  ['janus_git_pending_results', 'gauge', []],
  ['janus_git_last_poll_timestamp_seconds', 'gauge', []],
  ['janus_git_suspended', 'gauge', []],
  ['janus_source_drifted_objects', 'gauge', ['namespace', 'source']],
  ['janus_webhook_requests_total', 'counter', ['outcome', 'provider']],
  ['janus_commit_status_deliveries_total', 'counter', ['provider', 'result']],
  ['janus_notifications_total', 'counter', ['provider', 'result']],
  ['janus_workqueue_depth', 'gauge', ['name']],
  ['janus_workqueue_adds_total', 'counter', ['name']],
  ['janus_workqueue_retries_total', 'counter', ['name']],
  ['janus_workqueue_queue_duration_seconds', 'histogram', ['name']],
  ['janus_workqueue_work_duration_seconds', 'histogram', ['name']],
  ['janus_workqueue_longest_running_processor_seconds', 'gauge', ['name']],
  ['janus_kube_requests_total', 'counter', ['code', 'method']],
  ['janus_kube_request_duration_seconds', 'histogram', ['method']],
  ['janus_reconcile_total', 'counter', ['result']],
  ['janus_reconcile_duration_seconds', 'histogram', []],
  ['janus_leader', 'gauge', ['lease']],
  ['janus_installation_conflicts_total', 'counter', []],
];

/** Calls every recording method once, so that every family has at least one series. */
function exerciseEverything(metrics: Metrics): void {
  metrics.transition('Pending', 'Preparing');
  metrics.transactionFinished('Committed', 1.5);
  metrics.setActiveTransactions({ Committing: 1 });
  metrics.itemOperation('commit', 'success');
  metrics.transactionPruned();
  metrics.setGitSuspended(true);
  metrics.setSourceDrift('shop', 'shop', 2);
  metrics.lockOperation('acquire', 'conflict');
  metrics.itemCount(3);
  metrics.gitPoll('success', 0.2);
  metrics.gitPush('success');
  metrics.setPendingResults(2);
  metrics.webhookRequest('github', 'triggered');
  metrics.commitStatus('gitea', 'sent');
  metrics.notification('audit', 'sent');
  const queue = metrics.workQueueMetrics('transactions');
  queue.add();
  queue.depth(1);
  queue.retry();
  queue.queueLatency(0.01);
  queue.workDuration(0.3);
  queue.longestRunning(0.3);
  metrics.kubeRequest({
    method: 'GET',
    path: '/api/v1/namespaces',
    status: 200,
    seconds: 0.02,
    impersonating: undefined,
  });
  metrics.reconcile('success', 0.05);
  metrics.measurementSlots.running?.(1);
  metrics.setLeader(true);
}

describe('the metric catalog', () => {
  it.each(CATALOG)('exports %s as a %s with labels %j', async (name, type, labels) => {
    const metrics = new Metrics();
    exerciseEverything(metrics);

    const f = family(await scrape(metrics), name);

    expect(f.type).toBe(type);
    expect(labelNamesOf(f)).toEqual([...labels]);
    expect(f.help).not.toBe('');
    expect(f.samples.length).toBeGreaterThan(0);
  });

  it('exports nothing beyond the catalog, so docs/metrics.md stays complete', async () => {
    const metrics = new Metrics();
    exerciseEverything(metrics);

    const names = [...(await scrape(metrics)).keys()];

    expect(names.sort()).toEqual(CATALOG.map(([name]) => name).sort());
  });

  it('serves the Prometheus text format 0.0.4', () => {
    expect(new Metrics().contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
  });
});

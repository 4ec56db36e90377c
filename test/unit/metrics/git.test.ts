import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/metrics/index.ts';
import { histogramOf, sampleValue, scrape } from './query.ts';

describe('git polls', () => {
  it('counts by result, times every poll, and stamps only successful ones', async () => {
    let now = 1_700_000_000_500;
    const metrics = new Metrics({ now: () => now });

    metrics.gitPoll('success', 0.25);
    now += 60_000;
    metrics.gitPoll('error', 30);

    const exposition = await scrape(metrics);
    expect(sampleValue(exposition, 'janus_git_polls_total', { result: 'success' })).toBe(1);
    expect(sampleValue(exposition, 'janus_git_polls_total', { result: 'error' })).toBe(1);
    expect(histogramOf(exposition, 'janus_git_poll_duration_seconds').count).toBe(2);
    expect(histogramOf(exposition, 'janus_git_poll_duration_seconds').sum).toBeCloseTo(30.25);
    expect(sampleValue(exposition, 'janus_git_last_poll_timestamp_seconds')).toBe(1_700_000_000.5);
  });

  it('reports a last-poll timestamp of 0 until a poll succeeds', async () => {
    const metrics = new Metrics();

    metrics.gitPoll('error', 1);

    expect(sampleValue(await scrape(metrics), 'janus_git_last_poll_timestamp_seconds')).toBe(0);
  });
});

describe('git pushes and pending results', () => {
  it('counts pushes by result, from zero', async () => {
    const metrics = new Metrics();

    metrics.gitPush('rejected');
    metrics.gitPush('success');
    metrics.gitPush('success');

    const exposition = await scrape(metrics);
    expect(sampleValue(exposition, 'janus_git_pushes_total', { result: 'success' })).toBe(2);
    expect(sampleValue(exposition, 'janus_git_pushes_total', { result: 'rejected' })).toBe(1);
    expect(sampleValue(exposition, 'janus_git_pushes_total', { result: 'error' })).toBe(0);
  });

  it('reports the pending results last set', async () => {
    const metrics = new Metrics();

    metrics.setPendingResults(5);
    metrics.setPendingResults(2);

    expect(sampleValue(await scrape(metrics), 'janus_git_pending_results')).toBe(2);
  });
});

describe('webhook requests', () => {
  it('counts by provider and outcome', async () => {
    const metrics = new Metrics();

    metrics.webhookRequest('gitlab', 'unauthorized');
    metrics.webhookRequest('gitlab', 'unauthorized');
    metrics.webhookRequest('unknown', 'not_found');

    const exposition = await scrape(metrics);
    const name = 'janus_webhook_requests_total';
    expect(sampleValue(exposition, name, { provider: 'gitlab', outcome: 'unauthorized' })).toBe(2);
    expect(sampleValue(exposition, name, { provider: 'unknown', outcome: 'not_found' })).toBe(1);
  });
});

describe('commit status deliveries', () => {
  it('shows zeros for a provider once commit statuses are on, then counts by result', async () => {
    const metrics = new Metrics();
    expect(
      sampleValue(await scrape(metrics), 'janus_commit_status_deliveries_total', {
        provider: 'github',
        result: 'sent',
      }),
    ).toBeUndefined();

    metrics.commitStatus('github', undefined);
    metrics.commitStatus('github', 'retried');
    metrics.commitStatus('github', 'sent');

    const exposition = await scrape(metrics);
    const name = 'janus_commit_status_deliveries_total';
    expect(sampleValue(exposition, name, { provider: 'github', result: 'sent' })).toBe(1);
    expect(sampleValue(exposition, name, { provider: 'github', result: 'retried' })).toBe(1);
    expect(sampleValue(exposition, name, { provider: 'github', result: 'failed' })).toBe(0);
    expect(sampleValue(exposition, name, { provider: 'github', result: 'unchanged' })).toBe(0);
  });
});

describe('notification deliveries', () => {
  it('shows zeros for a configured provider, then counts by result', async () => {
    const metrics = new Metrics();
    const name = 'janus_notifications_total';
    expect(sampleValue(await scrape(metrics), name, { provider: 'audit', result: 'sent' })).toBeUndefined();

    metrics.notification('audit', undefined);
    metrics.notification('audit', 'failed');
    metrics.notification('audit', undefined); // read again: zeros added, nothing reset

    const exposition = await scrape(metrics);
    expect(sampleValue(exposition, name, { provider: 'audit', result: 'failed' })).toBe(1);
    expect(sampleValue(exposition, name, { provider: 'audit', result: 'sent' })).toBe(0);
    expect(sampleValue(exposition, name, { provider: 'audit', result: 'retried' })).toBe(0);
    expect(sampleValue(exposition, name, { provider: 'audit', result: 'dropped' })).toBe(0);
  });
});

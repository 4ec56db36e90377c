import { GIT_POLL_BUCKETS } from './buckets.ts';
import { GIT_POLL_RESULTS, GIT_PUSH_RESULTS } from './labels.ts';
import { Counter, Gauge, Histogram, type Registry } from './prom.ts';

/** The Git side: polling the watched branch, pushing results, and the webhooks that nudge polls. */
export function gitInstruments(registry: Registry) {
  const registers = [registry];
  const instruments = {
    polls: new Counter({
      name: 'janus_git_polls_total',
      help: 'Polls of the watched branch, by result.',
      labelNames: ['result'] as const,
      registers,
    }),
    pollDuration: new Histogram({
      name: 'janus_git_poll_duration_seconds',
      help: 'Time taken by one poll of the watched branch, failed polls included.',
      buckets: GIT_POLL_BUCKETS,
      registers,
    }),
    lastPoll: new Gauge({
      name: 'janus_git_last_poll_timestamp_seconds',
      help: 'Unix time of the last successful poll; 0 until one succeeds.',
      registers,
    }),
    pushes: new Counter({
      name: 'janus_git_pushes_total',
      help: 'Pushes to the results branch, by result.',
      labelNames: ['result'] as const,
      registers,
    }),
    pendingResults: new Gauge({
      name: 'janus_git_pending_results',
      help: 'Transaction outcomes waiting to be committed and pushed to the results branch.',
      registers,
    }),
    suspended: new Gauge({
      name: 'janus_git_suspended',
      help: '1 while the Git side is suspended (janus suspend): no new directories are materialized.',
      registers,
    }),
    commitStatuses: new Counter({
      name: 'janus_commit_status_deliveries_total',
      help: 'Commit statuses delivered to the forge, by provider and result.',
      labelNames: ['provider', 'result'] as const,
      registers,
    }),
    sourceDriftedObjects: new Gauge({
      name: 'janus_source_drifted_objects',
      help: 'Objects of a source that differed from its last applied render when last checked (docs/sources.md, Drift); one series per Source this process checks.',
      labelNames: ['namespace', 'source'] as const,
      registers,
    }),
    webhookRequests: new Counter({
      name: 'janus_webhook_requests_total',
      help: 'Webhook requests received, by sender and outcome.',
      labelNames: ['provider', 'outcome'] as const,
      registers,
    }),
  };

  for (const result of GIT_POLL_RESULTS) instruments.polls.inc({ result }, 0);
  for (const result of GIT_PUSH_RESULTS) instruments.pushes.inc({ result }, 0);
  return instruments;
}

export type GitInstruments = ReturnType<typeof gitInstruments>;

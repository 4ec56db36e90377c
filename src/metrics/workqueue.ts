import { WORKQUEUE_BUCKETS } from './buckets.ts';
import { Counter, Gauge, Histogram, type Registry } from './prom.ts';

/**
 * What a work queue reports, under client-go's metric names (`janus_workqueue_*{name}`) so the
 * usual controller dashboards and alerts work unchanged. One adapter per queue; `name` labels it.
 */
export interface WorkQueueMetrics {
  /** A key was added, whether or not it was already queued (client-go counts every Add). */
  add(): void;
  /** The number of keys now waiting to be processed; report it after every add and take. */
  depth(keys: number): void;
  /** A key was re-queued with backoff after a failed attempt. */
  retry(): void;
  /** A key was taken by a worker after waiting `seconds` since it was (last) added. */
  queueLatency(seconds: number): void;
  /** A worker finished a key after working on it for `seconds`. */
  workDuration(seconds: number): void;
  /** How long the oldest still-running worker has been busy; 0 when all are idle. Stuck workers show here. */
  longestRunning(seconds: number): void;
}

export function workQueueInstruments(registry: Registry) {
  const registers = [registry];
  const labelNames = ['name'] as const;
  return {
    depth: new Gauge({
      name: 'janus_workqueue_depth',
      help: 'Current depth of the work queue.',
      labelNames,
      registers,
    }),
    adds: new Counter({
      name: 'janus_workqueue_adds_total',
      help: 'Adds handled by the work queue.',
      labelNames,
      registers,
    }),
    retries: new Counter({
      name: 'janus_workqueue_retries_total',
      help: 'Retries handled by the work queue.',
      labelNames,
      registers,
    }),
    queueDuration: new Histogram({
      name: 'janus_workqueue_queue_duration_seconds',
      help: 'How long a key stays in the work queue before a worker takes it.',
      labelNames,
      buckets: WORKQUEUE_BUCKETS,
      registers,
    }),
    workDuration: new Histogram({
      name: 'janus_workqueue_work_duration_seconds',
      help: 'How long processing a key from the work queue takes.',
      labelNames,
      buckets: WORKQUEUE_BUCKETS,
      registers,
    }),
    longestRunning: new Gauge({
      name: 'janus_workqueue_longest_running_processor_seconds',
      help: 'How long the longest-running worker of the queue has been processing its key.',
      labelNames,
      registers,
    }),
  };
}

export type WorkQueueInstruments = ReturnType<typeof workQueueInstruments>;

/** Binds the instruments to one queue's `name`; its series all appear (at zero) right away. */
export function bindWorkQueue(instruments: WorkQueueInstruments, name: string): WorkQueueMetrics {
  const labels = { name };
  instruments.depth.set(labels, 0);
  instruments.adds.inc(labels, 0);
  instruments.retries.inc(labels, 0);
  instruments.queueDuration.zero(labels);
  instruments.workDuration.zero(labels);
  instruments.longestRunning.set(labels, 0);
  return {
    add: () => instruments.adds.inc(labels),
    depth: (keys) => instruments.depth.set(labels, keys),
    retry: () => instruments.retries.inc(labels),
    queueLatency: (seconds) => instruments.queueDuration.observe(labels, seconds),
    workDuration: (seconds) => instruments.workDuration.observe(labels, seconds),
    longestRunning: (seconds) => instruments.longestRunning.set(labels, seconds),
  };
}

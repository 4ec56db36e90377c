/**
 * Deliveries, off the controller's path: `enqueue` returns at once, never waits on a receiver.
 * One queue per provider, delivered in order (an Alertmanager resolve must not overtake the
 * alert it resolves) and one at a time, so a slow receiver holds only its own queue. A failure a
 * retry may fix is retried with the one backoff (runtime/backoff.ts), a bounded number of times;
 * all queues together hold at most `maxQueued` deliveries, past which a new one is dropped and
 * counted. The queue itself is not kept: a restart replays recent events, and the ledger
 * (ledger-store.ts) says which of them were already delivered (docs/operations.md).
 */
import type { Logger } from '../log/index.ts';
import { type BackoffPolicy, backoffDelay } from '../runtime/backoff.ts';
import { sleep } from '../runtime/sleep.ts';
import type { ProviderConfig } from './config.ts';
import type { Payload } from './payloads/index.ts';
import { DeliveryError } from './post.ts';

export type DeliveryResult = 'sent' | 'failed' | 'retried' | 'dropped';

/** Deliveries waiting across all providers. */
export const DEFAULT_MAX_QUEUED = 1000;
/** Tries of one delivery, the first included. */
export const DEFAULT_ATTEMPTS = 6;
/** 1 s, 2 s, 4 s, 8 s, 16 s between the 6 tries (jittered down by up to half): about 31 s at most. */
export const DEFAULT_RETRY: BackoffPolicy = { baseMs: 1000, capMs: 30_000, jitter: 0.5 };

export interface DeliveryOptions {
  post(provider: ProviderConfig, payload: Payload): Promise<void>;
  onResult(provider: string, result: DeliveryResult): void;
  /** A delivery the receiver accepted (2xx): the ledger records it (ledger-store.ts). */
  onSent?: ((provider: string, event: string) => void) | undefined;
  log: Logger;
  maxQueued?: number;
  attempts?: number;
  retry?: BackoffPolicy;
}

interface Job {
  provider: ProviderConfig;
  payload: Payload;
  event: string;
}

export class DeliveryQueue {
  readonly #o: DeliveryOptions;
  readonly #queues = new Map<string, Job[]>();
  readonly #running = new Map<string, Promise<void>>();
  readonly #stop = new AbortController();
  #size = 0;

  constructor(options: DeliveryOptions) {
    this.#o = options;
  }

  /** Deliveries waiting or in progress. */
  get size(): number {
    return this.#size;
  }

  /** Queues one delivery; false (and counted as dropped) when the queues are full or stopped. */
  enqueue(provider: ProviderConfig, payload: Payload, event: string): boolean {
    if (this.#stop.signal.aborted || this.#size >= (this.#o.maxQueued ?? DEFAULT_MAX_QUEUED)) {
      this.#o.onResult(provider.name, 'dropped');
      this.#o.log.warn(
        { provider: provider.name, event },
        'notification dropped: the delivery queue is full',
      );
      return false;
    }
    this.#size++;
    const queue = this.#queues.get(provider.name) ?? [];
    queue.push({ provider, payload, event });
    this.#queues.set(provider.name, queue);
    // Started on the next tick, so it is recorded as running before it can end; it forgets itself
    // in the same step that finds its queue empty, so no job is ever left without a drain.
    if (!this.#running.has(provider.name))
      this.#running.set(
        provider.name,
        Promise.resolve().then(() => this.#drain(provider.name)),
      );
    return true;
  }

  /** Resolves when every queue is empty (tests, and a clean stop that may wait). */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.all(this.#running.values());
  }

  /** Stops retrying and waits for the requests in flight; what is still queued is dropped. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await Promise.all(this.#running.values());
  }

  async #drain(name: string): Promise<void> {
    const queue = this.#queues.get(name) ?? [];
    for (let job = queue.shift(); job; job = queue.shift()) {
      try {
        if (this.#stop.signal.aborted) this.#o.onResult(name, 'dropped');
        else await this.#deliver(job);
      } finally {
        this.#size--;
      }
    }
    this.#queues.delete(name);
    this.#running.delete(name);
  }

  async #deliver(job: Job): Promise<void> {
    const attempts = this.#o.attempts ?? DEFAULT_ATTEMPTS;
    const log = { provider: job.provider.name, type: job.provider.type, event: job.event };
    for (let attempt = 0; ; attempt++) {
      try {
        await this.#o.post(job.provider, job.payload);
        this.#o.onResult(job.provider.name, 'sent');
        this.#o.onSent?.(job.provider.name, job.event);
        this.#o.log.info(log, 'notification sent');
        return;
      } catch (error) {
        const retryable = !(error instanceof DeliveryError) || error.retryable;
        if (!retryable || attempt + 1 >= attempts || this.#stop.signal.aborted) {
          this.#o.onResult(job.provider.name, 'failed');
          this.#o.log.warn({ ...log, err: error, attempts: attempt + 1 }, 'notification not delivered');
          return;
        }
        const delay = backoffDelay(attempt, this.#o.retry ?? DEFAULT_RETRY);
        this.#o.onResult(job.provider.name, 'retried');
        this.#o.log.info({ ...log, err: error, retryInMs: delay }, 'notification failed; will retry');
        await sleep(delay, this.#stop.signal);
      }
    }
  }
}

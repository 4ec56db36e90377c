/**
 * A keyed work queue with client-go workqueue semantics, on p-queue for the worker pool:
 *
 * - a key waits at most once: adding a waiting key is a no-op;
 * - a key is never handled by two workers at once: adding a key that is being handled marks it
 *   dirty, and it runs once more after the current run;
 * - `addAfter` keeps only the earliest pending timer per key;
 * - `addRateLimited` backs off per key until `forget` (which success does, as controller-runtime);
 * - with `groupOf`, a free worker takes the oldest key of the next group in turn (round robin
 *   over the groups that have keys waiting, FIFO within one): a group that adds a thousand keys
 *   delays another's by at most one handling per group, not a thousand. The controller groups by
 *   namespace, so one tenant's busy afternoon is that tenant's.
 */
import PQueue from 'p-queue';
import { type Logger, silentLogger } from '../log/index.ts';
import { type BackoffPolicy, KeyedBackoff, type Random } from './backoff.ts';
import { guardHooks } from './guard-hooks.ts';

// biome-ignore lint/suspicious/noConfusingVoidType: handlers may return nothing.
export type WorkResult = { requeueAfterMs?: number | undefined } | void;

/**
 * Handles one key. Resolving with `requeueAfterMs` runs the key again after that delay (e.g. a
 * deadline); rejecting retries it with per-key backoff. `signal` aborts when shutdown gives up
 * waiting for in-flight work.
 */
export type WorkHandler = (key: string, signal: AbortSignal) => Promise<WorkResult>;

/** Metrics hooks, as client-go's workqueue metrics; the caller binds them to a registry. */
export interface WorkQueueMetrics {
  /** Keys waiting for a worker, after every change. */
  depth?(keys: number): void;
  add?(): void;
  retry?(): void;
  /** From the add that queued a key to a worker taking it. */
  queueLatency?(seconds: number): void;
  workDuration?(seconds: number): void;
}

export interface WorkQueueOptions {
  handler: WorkHandler;
  /** Keys handled at once. Default 1. */
  concurrency?: number | undefined;
  /** Per-key retry backoff. Default 100 ms doubling to 5 min, shortened by up to 10 % at random. */
  retryBackoff?: BackoffPolicy | undefined;
  metrics?: WorkQueueMetrics | undefined;
  logger?: Logger | undefined;
  random?: Random | undefined;
  /** The fairness group of a key (e.g. its namespace). Default: one group, FIFO. */
  groupOf?: ((key: string) => string) | undefined;
}

export const DEFAULT_RETRY_BACKOFF: BackoffPolicy = { baseMs: 100, capMs: 5 * 60_000, jitter: 0.1 };

export class WorkQueue {
  readonly #handler: WorkHandler;
  readonly #workers: PQueue;
  readonly #backoff: KeyedBackoff;
  readonly #metrics: WorkQueueMetrics;
  readonly #logger: Logger;
  /** Keys waiting for a worker, with the time they were added. */
  readonly #waiting = new Map<string, number>();
  /** The same keys by group, each FIFO; the groups in the order they take turns. */
  readonly #turns = new Map<string, Set<string>>();
  readonly #groupOf: (key: string) => string;
  readonly #processing = new Set<string>();
  /** Keys added while being processed, with the time they were added. */
  readonly #dirty = new Map<string, number>();
  readonly #timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  readonly #outOfTime = new AbortController();
  #shuttingDown = false;

  constructor(opts: WorkQueueOptions) {
    this.#handler = opts.handler;
    this.#groupOf = opts.groupOf ?? (() => '');
    this.#workers = new PQueue({ concurrency: opts.concurrency ?? 1 });
    this.#backoff = new KeyedBackoff(opts.retryBackoff ?? DEFAULT_RETRY_BACKOFF, opts.random);
    this.#logger = opts.logger ?? silentLogger();
    this.#metrics = guardHooks(
      opts.metrics,
      ['depth', 'add', 'retry', 'queueLatency', 'workDuration'],
      (err, hook) => this.#logger.error({ err, hook }, 'work queue metrics hook failed'),
    );
  }

  /** Keys waiting for a worker (not those being handled or waiting on a timer). */
  get length(): number {
    return this.#waiting.size;
  }

  get isShuttingDown(): boolean {
    return this.#shuttingDown;
  }

  add(key: string): void {
    if (this.#shuttingDown || this.#waiting.has(key) || this.#dirty.has(key)) return;
    this.#metrics.add?.();
    if (this.#processing.has(key)) this.#dirty.set(key, performance.now());
    else this.#enqueue(key, performance.now());
  }

  /** Adds `key` after `ms`; of several pending delays for one key only the earliest is kept. */
  addAfter(key: string, ms: number): void {
    if (this.#shuttingDown) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = performance.now() + ms;
    const pending = this.#timers.get(key);
    if (pending && pending.at <= at) return;
    clearTimeout(pending?.timer);
    const timer = setTimeout(() => {
      this.#timers.delete(key);
      this.add(key);
    }, ms);
    this.#timers.set(key, { at, timer });
  }

  /** Adds `key` after its next per-key backoff delay. */
  addRateLimited(key: string): void {
    if (this.#shuttingDown) return;
    this.#metrics.retry?.();
    this.addAfter(key, this.#backoff.next(key));
  }

  /** Resets `key`'s backoff. */
  forget(key: string): void {
    this.#backoff.forget(key);
  }

  /** How many times `key` has been retried since it was last forgotten. */
  numRequeues(key: string): number {
    return this.#backoff.failures(key);
  }

  /**
   * Stops accepting keys, drops waiting and delayed ones, and waits up to `timeoutMs` for
   * in-flight handlers. Resolves true if they all finished; otherwise aborts their signal.
   */
  async shutdown(timeoutMs = 30_000): Promise<boolean> {
    this.#shuttingDown = true;
    for (const { timer } of this.#timers.values()) clearTimeout(timer);
    this.#timers.clear();
    this.#waiting.clear();
    this.#turns.clear();
    this.#dirty.clear();
    this.#metrics.depth?.(0);
    let timeout: NodeJS.Timeout | undefined;
    const drained = await Promise.race([
      // Tasks still queued in p-queue start, see the shutdown and return at once.
      this.#workers.onIdle().then(() => true),
      new Promise<false>((resolve) => {
        timeout = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    clearTimeout(timeout);
    if (!drained) this.#outOfTime.abort(new Error('work queue shutdown timed out'));
    return drained;
  }

  #enqueue(key: string, addedAt: number): void {
    this.#waiting.set(key, addedAt);
    const group = this.#groupOf(key);
    const keys = this.#turns.get(group);
    if (keys) keys.add(key);
    else this.#turns.set(group, new Set([key]));
    this.#metrics.depth?.(this.#waiting.size);
    // One task per waiting key; each takes whichever key is next in turn, not necessarily this one.
    this.#workers
      .add(() => this.#processNext())
      .catch((e: unknown) => this.#logger.error({ err: e, key }, 'work queue task failed'));
  }

  /** The oldest key of the group whose turn it is; that group then goes to the back. */
  #takeNext(): string | undefined {
    for (const [group, keys] of this.#turns) {
      this.#turns.delete(group);
      const [key] = keys;
      if (key === undefined) continue;
      keys.delete(key);
      if (keys.size > 0) this.#turns.set(group, keys);
      return key;
    }
    return undefined;
  }

  async #processNext(): Promise<void> {
    const key = this.#shuttingDown ? undefined : this.#takeNext();
    const addedAt = key === undefined ? undefined : this.#waiting.get(key);
    if (key === undefined || addedAt === undefined) return;
    this.#waiting.delete(key);
    this.#metrics.depth?.(this.#waiting.size);
    this.#processing.add(key);
    const started = performance.now();
    this.#metrics.queueLatency?.((started - addedAt) / 1000);
    try {
      const result = await this.#handler(key, this.#outOfTime.signal);
      this.forget(key);
      if (result?.requeueAfterMs !== undefined) this.addAfter(key, result.requeueAfterMs);
    } catch (e) {
      this.#logger.warn({ err: e, key, retries: this.numRequeues(key) }, 'work item failed; retrying');
      this.addRateLimited(key);
    } finally {
      this.#metrics.workDuration?.((performance.now() - started) / 1000);
      this.#processing.delete(key);
      const readdedAt = this.#dirty.get(key);
      this.#dirty.delete(key);
      if (readdedAt !== undefined && !this.#shuttingDown) this.#enqueue(key, readdedAt);
    }
  }
}

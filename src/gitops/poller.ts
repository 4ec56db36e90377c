/**
 * Runs the poll of the watched branch: on an interval with jitter, at once when a webhook asks
 * (concurrent requests coalesce into one follow-up poll), sooner after a failure with
 * exponential backoff (never later than the next regular poll). A failing poll is logged and
 * counted, never thrown: the process keeps running and keeps trying.
 */
import type { Logger } from '../log/index.ts';
import type { GitPollResult } from '../metrics/labels.ts';
import { type BackoffPolicy, backoffDelay } from '../runtime/backoff.ts';
import type { CheckResult } from '../server/health.ts';

export interface PollerOptions<T> {
  poll(): Promise<T>;
  intervalMs: number;
  /** Fraction of the interval added or removed at random, so replicas and repositories spread out. Default 0.1. */
  jitter?: number;
  /** Retry delays after failures. Default 1 s doubling to 5 min, and never past the interval. */
  backoff?: BackoffPolicy;
  /** Readiness fails once polls have failed for this long. Default 60 s. */
  failureGraceMs?: number;
  /** True when a poll found nothing to do: logged at debug rather than info. */
  isIdle?(result: T): boolean;
  /**
   * True when the poll did not run at all (the Git side is suspended): neither a success nor a
   * failure, so it leaves the metrics and the readiness state as they were.
   */
  isSkipped?(result: T): boolean;
  /** True when a poll stopped before the tip (its budget ran out): the next one runs at once. */
  hasMore?(result: T): boolean;
  metrics?: { gitPoll(result: GitPollResult, seconds: number): void };
  log: Logger;
  now?: () => number;
  random?: () => number;
}

const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 1000, capMs: 5 * 60_000, jitter: 0.5 };

export class Poller<T> {
  readonly #o: PollerOptions<T>;
  readonly #now: () => number;
  readonly #random: () => number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  /** A trigger arrived while a poll ran: poll once more right after it. */
  #again = false;
  #stopped = false;
  #failures = 0;
  #lastSuccessAt: number | undefined;
  #failingSince: number | undefined;
  #lastError: string | undefined;

  constructor(options: PollerOptions<T>) {
    if (!(options.intervalMs > 0))
      throw new Error(`poll interval must be positive, got ${options.intervalMs} ms`);
    this.#o = options;
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
  }

  /** Polls now, then on the interval. */
  start(): void {
    this.#run('start');
  }

  /** Polls as soon as possible: now, or right after the poll in progress. */
  trigger(reason: string): void {
    if (this.#stopped) return;
    this.#o.log.debug({ reason }, 'poll requested');
    this.#run(reason);
  }

  /** Stops scheduling and waits for a poll in progress. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  /** The `git-reachable` readiness check: a poll succeeded, and polls have not been failing for long. */
  readiness(): CheckResult {
    const now = this.#now();
    const grace = this.#o.failureGraceMs ?? 60_000;
    const error = this.#lastError ? `: ${this.#lastError}` : '';
    if (this.#lastSuccessAt === undefined) {
      return { ok: false, detail: `no successful poll of the watched branch yet${error}` };
    }
    if (this.#failingSince !== undefined && now - this.#failingSince > grace) {
      return { ok: false, detail: `polls failing for ${seconds(now - this.#failingSince)}${error}` };
    }
    const stale = 3 * this.#o.intervalMs + grace;
    if (now - this.#lastSuccessAt > stale) {
      return { ok: false, detail: `no poll finished for ${seconds(now - this.#lastSuccessAt)}` };
    }
    return { ok: true, detail: `last successful poll ${seconds(now - this.#lastSuccessAt)} ago` };
  }

  #run(reason: string): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#running = this.#pollOnce(reason).finally(() => {
      this.#running = undefined;
      if (this.#stopped) return;
      if (this.#again) {
        this.#again = false;
        this.#run('trigger');
      } else this.#schedule();
    });
  }

  #schedule(): void {
    const jitter = this.#o.jitter ?? 0.1;
    const regular = Math.round(this.#o.intervalMs * (1 + jitter * (2 * this.#random() - 1)));
    const delay =
      this.#failures > 0
        ? Math.min(
            regular,
            backoffDelay(this.#failures - 1, this.#o.backoff ?? DEFAULT_BACKOFF, this.#random),
          )
        : regular;
    this.#timer = setTimeout(() => this.#run('interval'), delay);
  }

  async #pollOnce(reason: string): Promise<void> {
    const started = performance.now();
    try {
      const result = await this.#o.poll();
      if (this.#o.isSkipped?.(result)) {
        this.#o.log.debug({ reason, result }, 'poll skipped');
        return;
      }
      const elapsed = (performance.now() - started) / 1000;
      this.#failures = 0;
      this.#failingSince = undefined;
      this.#lastError = undefined;
      this.#lastSuccessAt = this.#now();
      if (this.#o.hasMore?.(result)) this.#again = true;
      this.#o.metrics?.gitPoll('success', elapsed);
      const level = this.#o.isIdle?.(result) ? 'debug' : 'info';
      this.#o.log[level]({ reason, seconds: round(elapsed), result }, 'poll done');
    } catch (error) {
      const elapsed = (performance.now() - started) / 1000;
      this.#failures++;
      this.#failingSince ??= this.#now();
      this.#lastError = error instanceof Error ? error.message : String(error);
      this.#o.metrics?.gitPoll('error', elapsed);
      this.#o.log.warn(
        { reason, err: error, failures: this.#failures },
        'poll failed; retrying with backoff',
      );
    }
  }
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)}s`;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

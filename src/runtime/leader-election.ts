/**
 * Leader election on a coordination.k8s.io/v1 Lease, with client-go's semantics (see
 * lease-record.ts for the expiry rule):
 *
 * - acquire by create, or by a PUT carrying the observed resourceVersion once the lease is free,
 *   ours, or expired by our clock; a 409 means someone else won;
 * - renew every retryPeriod by PUT; if no renewal started within renewDeadline has succeeded, stop
 *   leading. renewDeadline < leaseDuration, so we stop before anyone may take the lease over;
 * - on stop(), abort the term, keep renewing until the leader's work has wound down, then release
 *   the lease (holder "", duration 1 s, as ReleaseOnCancel) so a standby takes over at once.
 *
 * After losing the lease the elector becomes a candidate again, until stop().
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { KubeClient } from '../kube/client.ts';
import { type Logger, silentLogger } from '../log/index.ts';
import { jitterUp, type Random } from './backoff.ts';
import { LeaseLock } from './lease-lock.ts';
import { sleep } from './sleep.ts';

export interface LeaderElectorOptions {
  client: Pick<KubeClient, 'request'>;
  namespace: string;
  name: string;
  /** Default: hostname plus a random suffix, unique per process. */
  identity?: string | undefined;
  /** Whole seconds. Default 15 s. */
  leaseDurationMs?: number | undefined;
  /** Default 10 s. */
  renewDeadlineMs?: number | undefined;
  /** Default 2 s; acquire attempts are spread by up to 1.2× more, as client-go. */
  retryPeriodMs?: number | undefined;
  /**
   * Called on becoming leader; `signal` aborts when leadership ends. A returned promise is the
   * term's work: stop() waits for it before releasing the lease, and a new term waits for it too.
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called once a term is over and its work has settled. */
  onStoppedLeading?: (() => void) | undefined;
  /** Called when the observed holder changes ("" when released). */
  onNewLeader?: ((identity: string) => void) | undefined;
  logger?: Logger | undefined;
  random?: Random | undefined;
}

const JITTER_FACTOR = 1.2;

export interface LeaderTimings {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/**
 * What is wrong with a set of timings, if anything: which one (`subject`) and why. The CLI checks
 * this before it starts anything, so a typo is a usage error, never a replica that looks healthy
 * and never leads.
 */
export function leaderTimingsProblem(
  t: LeaderTimings,
): { subject: keyof LeaderTimings; message: string } | undefined {
  if (t.retryPeriodMs <= 0) return { subject: 'retryPeriodMs', message: 'must be positive' };
  if (t.leaseDurationMs < 1000 || t.leaseDurationMs % 1000 !== 0) {
    return { subject: 'leaseDurationMs', message: 'must be a whole number of seconds, at least 1s' };
  }
  if (t.leaseDurationMs <= t.renewDeadlineMs) {
    return { subject: 'leaseDurationMs', message: 'must exceed the renew deadline' };
  }
  if (t.renewDeadlineMs <= JITTER_FACTOR * t.retryPeriodMs) {
    return { subject: 'renewDeadlineMs', message: `must exceed ${JITTER_FACTOR} × the retry period` };
  }
  return undefined;
}

export class LeaderElector {
  readonly identity: string;
  readonly #opts: LeaderElectorOptions;
  readonly #logger: Logger;
  readonly #lock: LeaseLock;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #stop = new AbortController();
  #term: AbortController | undefined;
  #loop: Promise<void> | undefined;

  constructor(opts: LeaderElectorOptions) {
    this.#opts = opts;
    this.identity = opts.identity ?? `${hostname()}_${randomBytes(4).toString('hex')}`;
    const leaseDurationMs = opts.leaseDurationMs ?? 15_000;
    this.#renewDeadlineMs = opts.renewDeadlineMs ?? 10_000;
    this.#retryPeriodMs = opts.retryPeriodMs ?? 2_000;
    const problem = leaderTimingsProblem({
      leaseDurationMs,
      renewDeadlineMs: this.#renewDeadlineMs,
      retryPeriodMs: this.#retryPeriodMs,
    });
    if (problem) throw new Error(`${problem.subject} ${problem.message}`);
    this.#logger = (opts.logger ?? silentLogger()).child({
      lease: `${opts.namespace}/${opts.name}`,
      identity: this.identity,
    });
    this.#lock = new LeaseLock({
      client: opts.client,
      namespace: opts.namespace,
      name: opts.name,
      identity: this.identity,
      leaseDurationSeconds: leaseDurationMs / 1000,
      logger: this.#logger,
      onNewHolder: opts.onNewLeader,
    });
  }

  /** Starts campaigning; idempotent. */
  start(): void {
    if (this.#stop.signal.aborted) throw new Error('leader elector was stopped');
    this.#loop ??= this.#run(this.#stop.signal).catch((e: unknown) => {
      this.#logger.error({ err: e }, 'leader election loop crashed');
    });
  }

  /** Ends the term (its work first, then a release of the lease) and stops campaigning. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop;
  }

  /** True while this process leads and its term has not been aborted. */
  isLeader(): boolean {
    return this.#term !== undefined && !this.#term.signal.aborted;
  }

  /** The holder we last observed ("" if free, undefined before the first read). */
  leader(): string | undefined {
    return this.#lock.holder;
  }

  async #run(stop: AbortSignal): Promise<void> {
    while (!stop.aborted) {
      const acquiredAt = await this.#acquire(stop);
      if (acquiredAt === undefined) break;
      await this.#lead(stop, acquiredAt);
    }
  }

  /** Tries every retryPeriod (jittered) until it holds the lease; returns when the winning try started. */
  async #acquire(stop: AbortSignal): Promise<number | undefined> {
    while (!stop.aborted) {
      const startedAt = performance.now();
      const signal = AbortSignal.any([stop, AbortSignal.timeout(this.#renewDeadlineMs)]);
      if (await this.#lock.tryAcquireOrRenew(signal)) return startedAt;
      await sleep(jitterUp(this.#retryPeriodMs, JITTER_FACTOR, this.#opts.random), stop);
    }
    return undefined;
  }

  async #lead(stop: AbortSignal, acquiredAt: number): Promise<void> {
    const lost = new AbortController();
    const term = new AbortController();
    const endTerm = () => term.abort(stop.aborted ? stop.reason : lost.signal.reason);
    stop.addEventListener('abort', endTerm, { once: true });
    lost.signal.addEventListener('abort', endTerm, { once: true });
    if (stop.aborted) endTerm();
    const deadline = new RenewDeadline(this.#renewDeadlineMs, () =>
      lost.abort(new Error('failed to renew the lease within renewDeadline')),
    );
    deadline.reset(acquiredAt);
    this.#term = term;
    this.#logger.info('started leading');
    const work = this.#startWork(term.signal);
    try {
      await this.#renewUntil(term.signal, lost, deadline);
      if (!lost.signal.aborted) {
        // Stopping: hold the lease while the work winds down, so no new leader overlaps with it.
        const workDone = new AbortController();
        void work.then(() => workDone.abort());
        await this.#renewUntil(AbortSignal.any([workDone.signal, lost.signal]), lost, deadline);
      }
      await work;
      if (lost.signal.aborted) this.#logger.warn({ reason: String(lost.signal.reason) }, 'stopped leading');
      else await this.#release();
    } finally {
      deadline.clear();
      stop.removeEventListener('abort', endTerm);
      this.#term = undefined;
      this.#logger.info('leadership over');
      try {
        this.#opts.onStoppedLeading?.();
      } catch (e) {
        this.#logger.error({ err: e }, 'onStoppedLeading failed');
      }
    }
  }

  /** Renews every retryPeriod until `until` aborts or the lease is lost. */
  async #renewUntil(until: AbortSignal, lost: AbortController, deadline: RenewDeadline): Promise<void> {
    while (!until.aborted && !lost.signal.aborted) {
      await sleep(this.#retryPeriodMs, AbortSignal.any([until, lost.signal]));
      if (until.aborted || lost.signal.aborted) return;
      const startedAt = performance.now();
      if (await this.#lock.tryAcquireOrRenew(lost.signal)) deadline.reset(startedAt);
      else if (this.#lock.heldByOther()) lost.abort(new Error(`the lease is held by ${this.leader()}`));
    }
  }

  #startWork(signal: AbortSignal): Promise<void> {
    const report = (e: unknown) => this.#logger.error({ err: e }, 'onStartedLeading failed');
    try {
      return Promise.resolve(this.#opts.onStartedLeading(signal)).then(undefined, report);
    } catch (e) {
      report(e);
      return Promise.resolve();
    }
  }

  async #release(): Promise<void> {
    if (await this.#lock.release(AbortSignal.timeout(this.#renewDeadlineMs))) {
      this.#logger.info('released the lease');
    } else if (this.#lock.holder === this.identity) {
      this.#logger.warn('failed to release the lease; it frees when it expires');
    }
  }
}

/** Fires `onExpired` when no renewal started in the last renewDeadline has succeeded. */
class RenewDeadline {
  readonly #ms: number;
  readonly #onExpired: () => void;
  #timer: NodeJS.Timeout | undefined;

  constructor(ms: number, onExpired: () => void) {
    this.#ms = ms;
    this.#onExpired = onExpired;
  }

  /** A renewal that started at `startedAt` (monotonic ms) succeeded. */
  reset(startedAt: number): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(this.#onExpired, Math.max(0, startedAt + this.#ms - performance.now()));
  }

  clear(): void {
    clearTimeout(this.#timer);
  }
}

/**
 * Delivers commit statuses: what each transaction directory's source commit should show
 * (state.ts) is handed in as the transactions move (`offer`), and one worker sends, one request at
 * a time, only the latest wish per directory: a phase passed while the forge was slow or down is
 * skipped, never sent late and out of order. One exception: a directory's first pending status
 * is not skipped for its outcome, so a merge always shows pending, then success or failure.
 *
 * Exactly once per state, across restarts and leader changes: the forge itself is the record.
 * Before sending, the worker reads what the commit shows for the directory's context and sends
 * nothing when it is that status already; so a new term, which starts knowing nothing, re-offers
 * every Transaction and sends only what is missing (one read each). Only the leader runs this.
 *
 * Never blocks the apply: offers are synchronous and cheap; an outage or a rate limit delays only
 * this worker, retried with the one backoff (a rate limit's own "retry after" when it is longer).
 */
import type { Logger } from '../log/index.ts';
import type { CommitStatusResult } from '../metrics/labels.ts';
import { type BackoffPolicy, backoffDelay } from '../runtime/backoff.ts';
import { sleep } from '../runtime/sleep.ts';
import type { SendForgeRequest } from './client.ts';
import type { Forge } from './forge.ts';
import { judgeResponse } from './rate-limit.ts';
import { alreadyShown, postStatusRequest, readStatusRequest, shownStatus } from './requests.ts';
import type { CommitStatus } from './state.ts';

export interface CommitStatusReporterOptions {
  forge: Forge;
  send: SendForgeRequest;
  log: Logger;
  retry?: BackoffPolicy;
  onResult?(result: CommitStatusResult): void;
  /** A status is done with: delivered, found shown, or given up. */
  onDone?(status: CommitStatus): void;
  now?(): number;
}

export const DEFAULT_STATUS_RETRY: BackoffPolicy = { baseMs: 1000, capMs: 5 * 60_000, jitter: 0.5 };

/** What identifies one status as sent: a new state, description or link is a new status. */
function identity(s: CommitStatus): string {
  return JSON.stringify([s.sha, s.context, s.state, s.description, s.targetUrl ?? '']);
}

export class CommitStatusReporter {
  readonly #o: CommitStatusReporterOptions;
  /** Per directory key, what is left to deliver: the latest wish, after a first pending one. */
  readonly #wanted = new Map<string, CommitStatus[]>();
  /** What this term delivered (or found shown) per key. */
  readonly #delivered = new Map<string, string>();
  readonly #stop = new AbortController();
  #wake: (() => void) | undefined;
  #worker: Promise<void> | undefined;
  #failures = 0;

  constructor(options: CommitStatusReporterOptions) {
    this.#o = options;
  }

  start(): void {
    this.#worker ??= this.#run();
  }

  /** The status `key`'s commit should show now; replaces an earlier wish not yet sent. */
  offer(key: string, status: CommitStatus | undefined): void {
    if (!status || this.#delivered.get(key) === identity(status)) {
      this.#wanted.delete(key);
      return;
    }
    const [first] = this.#wanted.get(key) ?? [];
    const keepFirst =
      first !== undefined &&
      first.state === 'pending' &&
      status.state !== 'pending' &&
      !this.#delivered.has(key);
    this.#wanted.set(key, keepFirst ? [first, status] : [status]);
    this.#wake?.();
  }

  /** Forgets a directory whose Transaction is gone. */
  forget(key: string): void {
    this.#wanted.delete(key);
    this.#delivered.delete(key);
  }

  /** Statuses waiting to be delivered. */
  get pending(): number {
    return this.#wanted.size;
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    this.#wake?.();
    await this.#worker;
  }

  async #run(): Promise<void> {
    const signal = this.#stop.signal;
    while (!signal.aborted) {
      const next = this.#wanted.entries().next();
      if (!next.done && next.value[1].length === 0) this.#wanted.delete(next.value[0]); // never left so
      const status = next.value?.[1][0];
      if (next.done || !status) {
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = undefined;
        continue;
      }
      const key = next.value[0];
      const waitMs = await this.#deliver(status, signal).catch((error: unknown) => {
        if (signal.aborted) return 0;
        this.#o.log.warn({ err: error, context: status.context }, 'cannot reach the forge; retrying');
        this.#o.onResult?.('retried');
        return this.#backoff();
      });
      if (waitMs === undefined) {
        this.#failures = 0;
        // Delivered; a wish that came meanwhile replaced it or waits behind it, and is next.
        const left = (this.#wanted.get(key) ?? []).filter((s) => s !== status);
        if (left.length > 0) this.#wanted.set(key, left);
        else this.#wanted.delete(key);
        this.#delivered.set(key, identity(status));
        this.#o.onDone?.(status);
        continue;
      }
      // Rate limit or outage: the forge is the one resource, so the whole worker waits.
      await sleep(waitMs, signal);
    }
  }

  /** Sends `status` unless the commit shows it; undefined when done, else how long to wait. */
  async #deliver(status: CommitStatus, signal: AbortSignal): Promise<number | undefined> {
    const { forge, send, log } = this.#o;
    const now = this.#o.now ?? Date.now;
    const read = await send(readStatusRequest(forge, status.sha, status.context), signal);
    const readVerdict = judgeResponse(read.status, read.headers, read.text, now());
    if (readVerdict.kind === 'retry') return this.#retry(status, readVerdict);
    // A read that is refused (an unknown commit) is not a reason to skip the write: it says why.
    const shown =
      readVerdict.kind === 'done' ? shownStatus(forge, parseJson(read.text), status.context) : undefined;
    if (alreadyShown(forge, shown, status)) {
      this.#o.onResult?.('unchanged');
      return undefined;
    }
    const posted = await send(postStatusRequest(forge, status), signal);
    const verdict = judgeResponse(posted.status, posted.headers, posted.text, now());
    if (verdict.kind === 'retry') return this.#retry(status, verdict);
    if (verdict.kind === 'give-up') {
      log.error(
        { context: status.context, sha: status.sha, state: status.state, why: verdict.why },
        'the forge refused the commit status; not retried (check the token and its permissions)',
      );
      this.#o.onResult?.('failed');
      return undefined;
    }
    log.info(
      { context: status.context, sha: status.sha, state: status.state, description: status.description },
      'commit status sent',
    );
    this.#o.onResult?.('sent');
    return undefined;
  }

  #retry(status: CommitStatus, verdict: { afterMs?: number; why: string }): number {
    const delay = Math.max(verdict.afterMs ?? 0, this.#backoff());
    this.#o.log.warn(
      { context: status.context, why: verdict.why, retryInMs: delay },
      'commit status not delivered yet; retrying',
    );
    this.#o.onResult?.('retried');
    return delay;
  }

  #backoff(): number {
    return backoffDelay(this.#failures++, this.#o.retry ?? DEFAULT_STATUS_RETRY);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

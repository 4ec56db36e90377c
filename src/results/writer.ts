/**
 * Writes results to the results branch: durably queued first (spool), then committed on top of the
 * branch's current tip and pushed. Results queued together go out in one push, of at most
 * PUSH_RECORDS (100) commits; more take several, in order. A push that loses a
 * race (non-fast-forward) is replayed onto the new tip, a bounded number of times with jittered
 * backoff; the branch is never force-pushed. While the server is unreachable results stay queued
 * and are retried with backoff until they are on the remote; a restart resumes from the spool.
 */
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Signature } from '../git/commit-info.ts';
import { GitAccessError } from '../git/errors.ts';
import type { CommitSigner } from '../git/object-batch.ts';
import type { GitRepository, GitSession } from '../git/repository.ts';
import { commitSigner, type SigningKeySource } from '../git/signing-key-file.ts';
import { publicKeyLine } from '../git/ssh-wire.ts';
import { type BackoffPolicy, backoffDelay } from '../runtime/backoff.ts';
import { commitRecords } from './commit-records.ts';
import { landedResults } from './landed.ts';
import type { ResultRecord } from './result-record.ts';
import { type AddOptions, ResultSpool, type SpoolEntry } from './spool.ts';

export const DEFAULT_RESULTS_BRANCH = 'janus/results';

export interface ResultsWriterOptions {
  repository: GitRepository;
  /** Default "janus/results". */
  branch?: string;
  /** Where pending results wait; default `<repository state dir>/pending-results`. */
  spoolDir?: string;
  /** Author and committer of result commits. */
  author?: { name: string; email: string };
  clock?: () => Date;
  /** How soon after a write the push starts, so results written together share one push. Default 50ms. */
  batchDelayMs?: number;
  /** Retrying while the server is unreachable (unbounded: results are never dropped). */
  retry?: BackoffPolicy;
  /** Replaying after a non-fast-forward rejection. */
  replay?: BackoffPolicy & { attempts: number };
  /**
   * Sign every results commit with this key (--results-signing-key-file), read before each
   * attempt so a replay or a push after a restart signs with the key in force then. Undefined:
   * unsigned. A key that cannot be read fails the push; the results stay queued.
   */
  signingKey?: SigningKeySource | undefined;
  logger?: Logger;
}

export interface FlushReport {
  /** Results that went out (some may have been on the branch already). */
  records: number;
  /** The branch tip after the push. */
  tip: string | undefined;
  /** Non-fast-forward rejections replayed. */
  replays: number;
}

const DEFAULT_RETRY: BackoffPolicy = { baseMs: 1000, capMs: 60_000, jitter: 0.5 };
const DEFAULT_REPLAY = { baseMs: 100, capMs: 2000, jitter: 0.5, attempts: 6 };
const DEFAULT_AUTHOR = { name: 'Janus', email: 'janus@tx.janus.io' };
/** Results per push: see #pushInParts. */
export const PUSH_RECORDS = 100;

export class ResultsWriter {
  readonly branch: string;
  readonly #repository: GitRepository;
  readonly #spool: ResultSpool;
  readonly #options: ResultsWriterOptions;
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<FlushReport> | undefined;
  #failures = 0;
  #closed = false;
  /**
   * Spool entries whose push may have landed without our knowing (a push that failed after it
   * was sent, or entries left by a previous process), with the tip that push was built on
   * (undefined: unknown). Looked for on the branch, down to that tip, before they are replayed.
   */
  readonly #uncertain = new Map<string, string | undefined>();
  /** The tip the push in progress was built on. */
  #pushedOnto: string | undefined;

  private constructor(options: ResultsWriterOptions, spool: ResultSpool) {
    this.branch = options.branch ?? DEFAULT_RESULTS_BRANCH;
    this.#repository = options.repository;
    this.#spool = spool;
    this.#options = options;
  }

  /** Opens the spool and, if a previous process left results in it, schedules their push. */
  static async open(options: ResultsWriterOptions): Promise<ResultsWriter> {
    const dir = options.spoolDir ?? join(options.repository.stateDir, 'pending-results');
    const spool = await ResultSpool.open(dir, (file) =>
      options.logger?.error({ file }, 'unreadable pending result set aside as *.corrupt'),
    );
    const writer = new ResultsWriter(options, spool);
    for (const entry of spool.entries()) writer.#uncertain.set(entry.id, undefined);
    if (spool.size > 0) writer.#schedule(0);
    return writer;
  }

  /** Number of results not yet confirmed on the remote. */
  get pending(): number {
    return this.#spool.size;
  }

  /**
   * Queues `record` durably (it survives a crash once this resolves; a `rederivable` one, only
   * a crash of this process: spool.ts); the push follows shortly.
   */
  async write(record: ResultRecord, options?: AddOptions): Promise<void> {
    if (this.#closed) throw new Error('the results writer is closed');
    await this.#spool.add(record, options);
    this.#schedule(this.#options.batchDelayMs ?? 50);
  }

  /**
   * Pushes everything pending now. Rejects (with a GitAccessError) when that fails; the results
   * stay queued and a retry is scheduled.
   */
  async flush(): Promise<FlushReport> {
    while (this.#inFlight) await this.#inFlight.catch(() => undefined);
    const run = this.#pushInParts(this.#spool.entries());
    this.#inFlight = run;
    try {
      const report = await run;
      this.#failures = 0;
      if (this.#spool.size > 0) this.#schedule(0); // written while this push ran
      return report;
    } catch (error) {
      const delay = backoffDelay(this.#failures++, this.#options.retry ?? DEFAULT_RETRY);
      this.#options.logger?.warn(
        { err: error, pending: this.#spool.size, retryInMs: delay },
        'results push failed; will retry',
      );
      this.#schedule(delay);
      throw error;
    } finally {
      this.#inFlight = undefined;
    }
  }

  /** Stops background retries and waits for a push in progress. Pending results stay on disk. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#inFlight?.catch(() => undefined);
  }

  #schedule(delayMs: number): void {
    if (this.#closed || this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.flush().catch(() => undefined); // logged and rescheduled by flush
    }, delayMs);
    this.#timer.unref();
  }

  /**
   * Pushes `entries` at most PUSH_RECORDS at a time. A push holds its commits' objects in memory
   * with their pack; with isomorphic-git's push (which read them back and packed them again),
   * one of 400 results (2,000 objects) was the peak of a poll that brought 400 directories.
   */
  async #pushInParts(entries: readonly SpoolEntry[]): Promise<FlushReport> {
    let total: FlushReport = { records: 0, tip: undefined, replays: 0 };
    for (let at = 0; at === 0 || at < entries.length; at += PUSH_RECORDS) {
      const report = await this.#push(entries.slice(at, at + PUSH_RECORDS));
      total = {
        records: total.records + report.records,
        tip: report.tip ?? total.tip,
        replays: total.replays + report.replays,
      };
    }
    return total;
  }

  async #push(batch: readonly SpoolEntry[]): Promise<FlushReport> {
    if (batch.length === 0) return { records: 0, tip: undefined, replays: 0 };
    let report: FlushReport;
    try {
      report = await this.#repository.run((session) => this.#pushWithReplay(session, batch));
    } catch (error) {
      // Keep the oldest tip an entry was pushed onto: anything that landed lies above it.
      for (const entry of batch) {
        if (!this.#uncertain.has(entry.id)) this.#uncertain.set(entry.id, this.#pushedOnto);
      }
      throw error;
    }
    await this.#spool.remove(batch);
    for (const entry of batch) this.#uncertain.delete(entry.id);
    this.#options.logger?.info(
      { records: batch.length, tip: report.tip, replays: report.replays },
      'results pushed',
    );
    return report;
  }

  async #pushWithReplay(session: GitSession, batch: readonly SpoolEntry[]): Promise<FlushReport> {
    const replay = this.#options.replay ?? DEFAULT_REPLAY;
    const records = batch.map((e) => e.record);
    const uncertain = batch.filter((e) => this.#uncertain.has(e.id));
    const bases = uncertain.map((e) => this.#uncertain.get(e.id));
    // A base is unknown after a restart: then look back as far as landedResults allows.
    const since = bases.every((b) => b !== undefined) ? new Set(bases as string[]) : undefined;
    for (let attempt = 0; ; attempt++) {
      const base = await session.fetch(this.branch);
      this.#pushedOnto = base;
      const landed = await landedResults(
        session.store,
        base,
        uncertain.map((e) => e.record),
        since,
      );
      if (landed.size > 0) {
        this.#options.logger?.info(
          { branch: this.branch, results: landed.size },
          'results already on the branch from an earlier push; not committing them again',
        );
      }
      const sign = await this.#signer();
      const { tip, objects } = await commitRecords(
        session.store,
        base,
        records,
        this.#signature(),
        landed,
        sign,
      );
      try {
        if (tip !== undefined && tip !== base) await session.push(this.branch, tip, base, objects);
        return { records: records.length, tip, replays: attempt };
      } catch (error) {
        const rejected = error instanceof GitAccessError && error.kind === 'rejected';
        if (!rejected || attempt + 1 >= replay.attempts) throw error;
        this.#options.logger?.info(
          { branch: this.branch, attempt },
          'results branch moved; replaying onto the new tip',
        );
        await new Promise((resolve) => setTimeout(resolve, backoffDelay(attempt, replay)));
      }
    }
  }

  async #signer(): Promise<CommitSigner | undefined> {
    const source = this.#options.signingKey;
    if (!source) return undefined;
    const { key, changed } = await source.read();
    if (changed) {
      this.#options.logger?.info(
        { signingKeyFile: source.path, publicKey: publicKeyLine(key.publicKey) },
        'results commits are signed with this key',
      );
    }
    return commitSigner(key);
  }

  #signature(): Signature {
    const author = this.#options.author ?? DEFAULT_AUTHOR;
    const now = (this.#options.clock ?? (() => new Date()))();
    return { ...author, timestamp: Math.floor(now.getTime() / 1000), timezoneOffset: 0 };
  }
}

/**
 * Writes the outcome of every Transaction that came from this repository to the results branch:
 * each terminal outcome (Committed, RolledBack, Failed) and each rollback start (RollingBack),
 * plus the Pending record the materializer asks for when it creates one.
 *
 * Never the same outcome twice: what was last recorded per transaction is kept as a fingerprint
 * (results-reader.ts), loaded from the results branch when a term starts and updated on every
 * write, so a restart, a second replica or a resync of the informer adds nothing. All writes go
 * through one queue, in the order the Transaction cache saw the transitions.
 *
 * Whether a record is due is judged from the cache: a finished Transaction is cached compact
 * (controller/transaction-cache.ts), which keeps what the fingerprint reads, so a restart over
 * thousands of recorded outcomes reads none of them again. One whose record must be written is
 * read in full first: the record names every change's target, health and the conditions.
 */

import PQueue from 'p-queue';
import {
  ANNOTATION_SOURCE_REPOSITORY,
  type Phase,
  sourceSequence,
  TERMINAL_PHASES,
  type Transaction,
} from '../api/v1alpha1/index.ts';
import { isCompact, readInFull, type TransactionCache } from '../controller/transaction-cache.ts';
import type { KubeClient } from '../kube/client.ts';
import type { Logger } from '../log/index.ts';
import { type BackoffPolicy, backoffDelay } from '../runtime/backoff.ts';
import { objectKey } from '../runtime/object-cache.ts';
import { sleep } from '../runtime/sleep.ts';
import { formatCommitMessage } from './commit-message.ts';
import { renderTransactionResult } from './render-transaction.ts';
import { type ResultContext, sourceCommit, sourceOf } from './result-context.ts';
import type { ResultRecord } from './result-record.ts';
import { fingerprintOf } from './results-reader.ts';
import type { AddOptions } from './spool.ts';
import type { ResultsWriter } from './writer.ts';

/** Phases the results branch records: every end, and the start of every rollback. */
export const REPORTED_PHASES: ReadonlySet<Phase> = new Set([...TERMINAL_PHASES, 'RollingBack']);

export interface ReporterOptions {
  /** The controller identity: reads a Transaction in full when its record is written. */
  client: KubeClient;
  /** This installation's Transactions (the process's cache; the manager starts and stops it). */
  cache: TransactionCache;
  /** The source repository as the materializer records it (URL or path, no credentials). */
  repository: string;
  writer: Pick<ResultsWriter, 'write' | 'flush' | 'pending'>;
  /** The result files ("<namespace>/<name>" → text) of these transactions on the results branch. */
  readRecorded(keys: readonly string[]): Promise<Map<string, string>>;
  context: ResultContext;
  log: Logger;
  /** Reading the results branch when a term starts, while the Git server is unreachable. */
  retry?: BackoffPolicy;
  onPending?(count: number): void;
  /**
   * Others that follow this repository's Transactions (commit statuses; notifications later):
   * each sees every add and update, in the cache's order, at every phase, and each resync.
   */
  listeners?: readonly TransactionListener[];
}

/** A follower of the transaction-outcome stream; must not throw or block (queue work, return). */
export interface TransactionListener {
  observe(txn: Transaction, key: string): void;
  forget(key: string): void;
}

const DEFAULT_RETRY: BackoffPolicy = { baseMs: 1000, capMs: 60_000, jitter: 0.5 };

export class ResultsReporter {
  readonly #o: ReporterOptions;
  /** Fingerprint of what the results branch holds per "<namespace>/<name>". */
  readonly #recorded = new Map<string, string>();
  readonly #queue = new PQueue({ concurrency: 1 });
  readonly #stop = new AbortController();
  #unregister: (() => void) | undefined;

  constructor(options: ReporterOptions) {
    this.#o = options;
  }

  /** Follows the cache; outcomes are written once the results branch has been read. */
  start(): void {
    // First in the queue: a cache listed already (a standby taking over) tells the handlers of
    // every Transaction at once, and their records must wait until the branch has been read.
    void this.#queue.add(() => this.#resync());
    this.#unregister = this.#o.cache.addHandlers({
      onAdd: (obj, key) => this.#observe(undefined, obj, key),
      onUpdate: (old, obj, key) => this.#observe(old, obj, key),
      onDelete: (_obj, key) => {
        for (const listener of this.#o.listeners ?? []) listener.forget(key);
        void this.#queue.add(() => this.#recorded.delete(key));
      },
    });
  }

  /** Waits until Transactions are listed (not for the results branch); false if stopped first. */
  waitForSync(): Promise<boolean> {
    if (this.#stop.signal.aborted) return Promise.resolve(false);
    return Promise.race([
      this.#o.cache.waitForSync(),
      new Promise<false>((resolve) =>
        this.#stop.signal.addEventListener('abort', () => resolve(false), { once: true }),
      ),
    ]);
  }

  /**
   * Queues the Pending record of a Transaction just materialized; resolves once it is queued.
   * Rederivable (spool.ts): the materializer's next poll writes it again if it is lost.
   */
  recordMaterialized(transaction: Transaction): Promise<void> {
    const key = objectKey(transaction);
    return this.#queue.add(async () => {
      if (this.#recorded.has(key)) return; // the informer was faster: a later outcome is recorded
      await this.#write(key, renderMaterialized(transaction, this.#o.context), { rederivable: true });
    });
  }

  /** The next free source-sequence, judging by this repository's Transactions in the cluster. */
  nextSequenceFloor(): number {
    let max = -1;
    for (const txn of this.#o.cache.list()) {
      if (!this.#ours(txn)) continue;
      const sequence = sourceSequence(txn.metadata.annotations);
      if (sequence !== undefined) max = Math.max(max, sequence);
    }
    return max + 1;
  }

  /**
   * Whether the outcome of `txn` as it stands is on the results branch: recorded by this
   * reporter with nothing left to push. False for a Transaction of another repository.
   */
  isRecorded(txn: Transaction): boolean {
    if (this.#o.writer.pending > 0) return false;
    const key = objectKey(txn);
    const own = this.#o.cache.get(key);
    if (!own || own.metadata.uid !== txn.metadata.uid || !this.#ours(own)) return false;
    const fingerprint = fingerprintOfRecord(renderTransactionResult(own, this.#o.context));
    return fingerprint !== undefined && this.#recorded.get(key) === fingerprint;
  }

  async stop(): Promise<void> {
    this.#unregister?.();
    this.#stop.abort();
    this.#queue.clear();
    await this.#queue.onIdle();
  }

  #ours(txn: Transaction): boolean {
    return txn.metadata.annotations?.[ANNOTATION_SOURCE_REPOSITORY] === this.#o.repository;
  }

  #observe(old: Transaction | undefined, txn: Transaction, key: string): void {
    if (!this.#ours(txn)) return;
    for (const listener of this.#o.listeners ?? []) listener.observe(txn, key);
    const phase = txn.status?.phase;
    if (!phase || !REPORTED_PHASES.has(phase)) return;
    // A rollback's progress is one record: only its start is written.
    if (old && old !== txn && phase === 'RollingBack' && old.status?.phase === 'RollingBack') return;
    this.#enqueue(key, txn);
  }

  /** Queues the record of `txn` as it is now; a failure (the spool cannot be written) is logged. */
  #enqueue(key: string, txn: Transaction): void {
    this.#queue
      .add(() => this.#report(key, txn))
      .catch((err: unknown) =>
        this.#o.log.error(
          { err, transaction: key },
          'cannot queue a result; it is written at the next resync',
        ),
      );
  }

  /** Writes the record of `txn` unless the branch has it; a compact one is read in full first. */
  async #report(key: string, txn: Transaction): Promise<void> {
    const record = renderTransactionResult(txn, this.#o.context);
    if (!isCompact(txn)) return this.#write(key, record);
    if (this.#recorded.get(key) === fingerprintOfRecord(record)) return;
    const full = await readInFull(this.#o.client, txn);
    if (full && full.metadata.uid === txn.metadata.uid)
      await this.#write(key, renderTransactionResult(full, this.#o.context));
  }

  async #write(key: string, record: ResultRecord, options?: AddOptions): Promise<void> {
    const fingerprint = fingerprintOfRecord(record);
    if (fingerprint === undefined || this.#recorded.get(key) === fingerprint) return;
    await this.#o.writer.write(record, options);
    this.#recorded.set(key, fingerprint);
    this.#o.onPending?.(this.#o.writer.pending);
    this.#o.log.info({ transaction: key, subject: record.message.split('\n', 1)[0] }, 'result recorded');
  }

  /**
   * Loads what the results branch records about every reportable Transaction, then queues their
   * current state: anything that changed while no one was writing is written now. Retries while
   * the Git server is unreachable; transitions seen meanwhile wait in the queue.
   */
  async #resync(): Promise<void> {
    if (!(await this.waitForSync())) return;
    for (let attempt = 0; !this.#stop.signal.aborted; attempt++) {
      try {
        await this.#o.writer.flush(); // a previous term's pending results land before we read
        const reportable = this.#o.cache
          .list()
          .filter((t) => this.#ours(t) && REPORTED_PHASES.has(t.status?.phase ?? 'Pending'));
        const files = await this.#o.readRecorded(reportable.map(objectKey));
        for (const [key, text] of files) {
          const fingerprint = fingerprintOf(text);
          if (fingerprint !== undefined) this.#recorded.set(key, fingerprint);
        }
        for (const txn of reportable) this.#enqueue(objectKey(txn), txn);
        this.#o.log.info({ transactions: reportable.length, recorded: files.size }, 'results branch read');
        return;
      } catch (error) {
        const delay = backoffDelay(attempt, this.#o.retry ?? DEFAULT_RETRY);
        this.#o.log.warn(
          { err: error, retryInMs: delay },
          'cannot read the results branch yet; outcomes wait',
        );
        await sleep(delay, this.#stop.signal);
      }
    }
  }
}

/** The result of a Transaction just created from Git: a Pending record naming where it came from. */
export function renderMaterialized(txn: Transaction, context: ResultContext): ResultRecord {
  const record = renderTransactionResult(txn, context);
  if (txn.status?.phase !== undefined && txn.status.phase !== 'Pending') return record;
  const id = objectKey(txn);
  const source = sourceOf(txn, context);
  const commit = sourceCommit(source.revision);
  const changes = txn.spec.changes.length;
  const subject = `${id}: Pending (materialized, ${changes} ${changes === 1 ? 'change' : 'changes'})`;
  const body = source.path ? `Source: ${source.path}${source.revision ? ` at ${source.revision}` : ''}` : '';
  return {
    files: record.files,
    message: formatCommitMessage(subject, [body], {
      transaction: id,
      phase: 'Pending',
      ...(commit && { source: commit }),
      ...(txn.spec.sourceRef && { sourceName: `${txn.metadata.namespace}/${txn.spec.sourceRef.name}` }),
    }),
  };
}

/** The fingerprint of a record's file (results-reader.ts); undefined for a record with none. */
function fingerprintOfRecord(record: ResultRecord): string | undefined {
  const text = Object.values(record.files)[0];
  return text === undefined ? undefined : fingerprintOf(text);
}

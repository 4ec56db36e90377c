/**
 * Turns new commits on the watched branch into Transactions, exactly once per directory.
 *
 * One poll: push what is pending on the results branch (so what it says is complete), fetch the
 * watched branch, list the directory changes since the cursor, read each changed directory and
 * its recorded outcome, then act on them in Git order: create Transactions (each with the next
 * source-sequence), record rejections and notices, request rollbacks. The cursor moves only once
 * every record of the poll is on the results branch; a poll that fails half-way is simply run
 * again, and finds what it already did recorded there.
 */
import { ANNOTATION_SOURCE_SEQUENCE, type Transaction } from '../api/v1alpha1/index.ts';
import { type ChangeSet, listChanges } from '../git/changes.ts';
import { GitAccessError } from '../git/errors.ts';
import type { GitRepository } from '../git/repository.ts';
import type { Logger } from '../log/index.ts';
import type { GitPushResult } from '../metrics/labels.ts';
import { type DirectoryRef, renderIgnoredEdit, renderRejection } from '../results/render-directory.ts';
import type { ResultContext } from '../results/result-context.ts';
import type { ResultRecord } from '../results/result-record.ts';
import { type RecordedOutcome, readResultsSnapshot } from '../results/results-reader.ts';
import type { AddOptions } from '../results/spool.ts';
import type { FlushReport } from '../results/writer.ts';
import type { TransactionApi } from './cluster-transactions.ts';
import { releaseTransaction } from './held-transaction.ts';
import { type DirectoryAction, decideDirectory, outcomeAfter } from './materialize-decision.ts';
import { type GatheredFacts, gatherFacts, listDirectories } from './materialize-facts.ts';
import {
  noticeRefusal,
  renderBaseline,
  renderClusterRefusal,
  renderRollbackRefusal,
} from './materialize-records.ts';
import type { ParseOptions } from './options.ts';
import { rejectionNamespace } from './policy.ts';
import { inputLimitError, type PollBudget } from './poll-budget.ts';
import { newStampKey, withStamp } from './provenance.ts';
import { type SignatureGate, signatureDiagnostic } from './signature-gate.ts';
import type { CursorStore, GitCursor } from './state.ts';
import { CursorConflictError } from './state.ts';

/** What the materializer needs of the ResultsWriter. */
export interface ResultSink {
  readonly branch: string;
  readonly pending: number;
  write(record: ResultRecord, options: AddOptions): Promise<void>;
  flush(): Promise<FlushReport>;
}

export interface MaterializerOptions {
  repository: GitRepository;
  branch: string;
  /** Folder of the transaction directories, e.g. "transactions". */
  root: string;
  parse: ParseOptions;
  /** --verify-signatures; undefined: commits are not checked (the default). */
  signatures?: SignatureGate | undefined;
  /** What one poll may read (default DEFAULT_POLL_BUDGET). */
  budget?: PollBudget;
  /** First run on a repository without a results branch: record what is there, or apply it. */
  initial: 'baseline' | 'apply';
  cluster: TransactionApi;
  cursor: CursorStore;
  results: ResultSink;
  /**
   * Resolves once the Pending result of a Transaction just created is queued, as rederivable
   * (src/results/spool.ts): like every record of a poll, the next poll writes it again if lost.
   */
  recordMaterialized(transaction: Transaction): Promise<void>;
  /** The smallest safe next sequence, from Transactions already in the cluster. */
  sequenceFloor?: () => number;
  context: ResultContext;
  log: Logger;
  metrics?: { gitPush(result: GitPushResult): void; setPendingResults(count: number): void };
}

export interface PollSummary {
  tip: string;
  /** How the new commits relate to the cursor; `idle` when nothing is new, `baseline` on a first run. */
  history: ChangeSet['history'] | 'idle' | 'baseline';
  commits: number;
  materialized: number;
  rejected: number;
  notices: number;
  rollbacks: number;
  /** Directories recorded as baseline (first run). */
  baseline: number;
  /** The poll's budget stopped it before the tip, at this commit: the next poll reads on from there. */
  stoppedAt?: string;
}

type Snapshot =
  | { kind: 'idle'; tip: string }
  | { kind: 'baseline'; tip: string; directories: string[] }
  | { kind: 'changes'; tip: string; changes: ChangeSet; facts: GatheredFacts[]; through: string };

export class Materializer {
  readonly #o: MaterializerOptions;
  #cursor: GitCursor | undefined;

  constructor(options: MaterializerOptions) {
    this.#o = options;
  }

  async poll(): Promise<PollSummary> {
    try {
      return await this.#poll();
    } catch (error) {
      // Someone else moved the cursor: read it again next time rather than guess.
      if (error instanceof CursorConflictError) this.#cursor = undefined;
      throw error;
    }
  }

  async #poll(): Promise<PollSummary> {
    await this.#flush(); // the results branch must show every earlier outcome before it is read
    const cursor = this.#cursor ?? (await this.#loadCursor());
    const snapshot = await this.#read(cursor);
    const summary: PollSummary = {
      tip: snapshot.tip,
      history: snapshot.kind === 'changes' ? snapshot.changes.history : snapshot.kind,
      commits: snapshot.kind === 'changes' ? snapshot.changes.commits.length : 0,
      materialized: 0,
      rejected: 0,
      notices: 0,
      rollbacks: 0,
      baseline: 0,
    };
    if (snapshot.kind === 'idle') return summary;
    let next = cursor.nextSequence;
    if (snapshot.kind === 'baseline') {
      const { repository, revision } = this.#source(snapshot.tip, '');
      if (snapshot.directories.length > 0)
        await this.#record(renderBaseline(snapshot.directories, { repository, revision }, this.#o.context));
      summary.baseline = snapshot.directories.length;
    } else {
      next = await this.#apply(snapshot.facts, cursor, summary);
    }
    await this.#flush();
    const through = snapshot.kind === 'changes' ? snapshot.through : snapshot.tip;
    if (through !== snapshot.tip) summary.stoppedAt = through;
    await this.#save({ ...cursor, lastCommit: through, nextSequence: next });
    return summary;
  }

  /**
   * The next source-sequence, for a Transaction made outside the directories (a source's commit,
   * src/sources/), saved before it is handed out, as the materializer's own; and the key that
   * stamps it. Called between polls (the poller runs one thing at a time), never during one.
   */
  async reserveSequence(): Promise<{ sequence: number; stampKey: string }> {
    const cursor = this.#cursor ?? (await this.#loadCursor());
    await this.#save({ ...cursor, nextSequence: cursor.nextSequence + 1 });
    return { sequence: cursor.nextSequence, stampKey: cursor.stampKey ?? '' };
  }

  /** The key of the provenance stamps (the cursor's, loaded if need be). */
  async stampKey(): Promise<string> {
    return (this.#cursor ?? (await this.#loadCursor())).stampKey ?? '';
  }

  async #loadCursor(): Promise<GitCursor> {
    const saved = await this.#o.cursor.load();
    const floor = this.#o.sequenceFloor?.() ?? 0;
    const cursor = {
      lastCommit: saved?.lastCommit,
      nextSequence: Math.max(saved?.nextSequence ?? 0, floor),
      // A lost key costs only the adoption of a Transaction created just before it was lost.
      stampKey: saved?.stampKey ?? newStampKey(),
    };
    this.#cursor = cursor;
    return cursor;
  }

  async #save(cursor: GitCursor): Promise<void> {
    await this.#o.cursor.save(cursor);
    this.#cursor = cursor;
  }

  /** Everything the poll decides on, read in one repository operation. */
  async #read(cursor: GitCursor): Promise<Snapshot> {
    try {
      return await this.#readAll(cursor);
    } catch (error) {
      throw inputLimitError(error, this.#o.repository.display, this.#o.branch);
    }
  }

  #readAll(cursor: GitCursor): Promise<Snapshot> {
    const { repository, branch, root, parse } = this.#o;
    return repository.run(async (session): Promise<Snapshot> => {
      const tip = await session.fetch(branch);
      if (tip === undefined) {
        throw new GitAccessError(
          'not-found',
          `the watched branch ${branch} does not exist in ${repository.display}`,
          {
            repository: repository.display,
            ref: branch,
          },
        );
      }
      if (tip === cursor.lastCommit) return { kind: 'idle', tip };
      const results = await readResultsSnapshot(session, this.#o.results.branch);
      const firstRun = cursor.lastCommit === undefined && results.tip === undefined;
      if (firstRun && this.#o.initial === 'baseline') {
        const tree = (await session.store.readCommit(tip)).tree;
        return { kind: 'baseline', tip, directories: await listDirectories(session, tree, root) };
      }
      if (cursor.lastCommit === undefined && !firstRun) {
        this.#o.log.warn(
          { resultsBranch: this.#o.results.branch },
          'no saved position in the watched branch: reading every directory at its tip; those the results branch records are not applied again',
        );
      }
      const changes = await listChanges(session, cursor.lastCommit, tip, { branch, root });
      const { facts, through } = await gatherFacts(session, changes, results, {
        parse,
        ...(this.#o.budget && { budget: this.#o.budget }),
        repository: repository.display,
        branch,
        gate: this.#o.signatures,
        log: this.#o.log,
      });
      return { kind: 'changes', tip, changes, facts, through };
    });
  }

  /**
   * Acts on every directory change in Git order; returns the next free sequence number. Takes
   * the facts out of `facts` as it goes: a parsed directory is let go once acted on, so the
   * parsed Transactions of a large commit do not all live on through the flush that follows.
   */
  async #apply(facts: GatheredFacts[], cursor: GitCursor, summary: PollSummary): Promise<number> {
    // Outcomes decided earlier in this poll, not yet on the results branch.
    const overlay = new Map<string, RecordedOutcome>();
    const first = cursor.nextSequence;
    const count = facts.length;
    let next = first;
    let reserved = false;
    facts.reverse();
    for (let fact = facts.pop(); fact; fact = facts.pop()) {
      const key = `${fact.namespace}/${fact.name}`;
      for (const action of decideDirectory(fact, overlay.get(key) ?? fact.recorded)) {
        if (action.do === 'materialize' && !reserved) {
          // Durable before any Transaction carries one: a restart never hands out a number twice.
          await this.#save({ ...cursor, nextSequence: first + count });
          reserved = true;
        }
        const outcome = await this.#execute(action, fact, next, summary);
        if (typeof outcome === 'object') next++;
        const after =
          outcome === 'refused'
            ? { phase: 'Rejected' }
            : outcomeAfter(action, fact, typeof outcome === 'object' ? outcome.uid : undefined);
        if (after) overlay.set(key, after);
      }
    }
    return next;
  }

  async #execute(
    action: DirectoryAction,
    fact: GatheredFacts,
    sequence: number,
    summary: PollSummary,
  ): Promise<Materialized | 'refused' | 'done'> {
    const dir: DirectoryRef = {
      namespace: fact.namespace,
      name: fact.name,
      source: this.#source(fact.commit, fact.path),
    };
    const log = this.#o.log.child({
      directory: fact.path,
      commit: fact.commit,
      transaction: `${dir.namespace}/${dir.name}`,
    });
    switch (action.do) {
      case 'materialize':
        return this.#materialize(fact, dir, sequence, summary, log);
      case 'reject': {
        const diagnostics = [
          ...(fact.parsed && !fact.parsed.ok ? fact.parsed.diagnostics : []),
          ...(fact.signatures?.ok === false ? [signatureDiagnostic(fact.path, fact.signatures)] : []),
        ];
        await this.#record(renderRejection(this.#rejected(dir), diagnostics, this.#o.context));
        summary.rejected++;
        log.info({ errors: diagnostics.length }, 'transaction directory rejected');
        return 'done';
      }
      case 'ignore-edit':
        await this.#record(
          renderIgnoredEdit(
            dir,
            action.files.map((f) => `${fact.path}/${f}`),
          ),
        );
        summary.notices++;
        log.info({ files: action.files }, 'edit of a materialized directory ignored');
        return 'done';
      case 'notice':
        await this.#record(renderRollbackRefusal(dir, noticeRefusal(action.notice, fact)));
        summary.notices++;
        return 'done';
      case 'request-rollback': {
        const reason = rollbackReason(action.reason, action.file, fact.commit);
        const origin = { uid: action.uid, repository: this.#o.repository.display, path: fact.path };
        const outcome = await this.#o.cluster.requestRollback(dir.namespace, dir.name, reason, origin);
        if (outcome.kind === 'refused') {
          await this.#record(renderRollbackRefusal(dir, outcome.refusal));
          summary.notices++;
        } else summary.rollbacks++;
        log.info({ outcome: outcome.kind }, 'ROLLBACK file seen');
        return 'done';
      }
    }
  }

  /** Creates the Transaction; a refusal that is about the directory is recorded as a rejection. */
  async #materialize(
    fact: GatheredFacts,
    dir: DirectoryRef,
    sequence: number,
    summary: PollSummary,
    log: Logger,
  ): Promise<Materialized | 'refused' | 'done'> {
    if (!fact.parsed?.ok) return 'done';
    const stampKey = this.#cursor?.stampKey ?? '';
    const created = await this.#o.cluster.create(
      withStamp(withSequence(releaseTransaction(fact.parsed.transaction), sequence), stampKey),
      stampKey,
    );
    if (created.kind === 'refused') {
      await this.#record(renderClusterRefusal(dir, created, this.#o.context));
      summary.rejected++;
      log.warn({ reason: created.message }, 'transaction directory refused by the cluster');
      return 'refused';
    }
    await this.#o.recordMaterialized(created.transaction);
    summary.materialized++;
    log.info({ sequence, existed: created.kind === 'exists' }, 'transaction materialized');
    return { uid: created.transaction.metadata.uid ?? '' };
  }

  /** `dir` as its rejection is filed: under the controller's namespace when it names one the policy refused. */
  #rejected(dir: DirectoryRef): DirectoryRef {
    const { namespace, refused } = rejectionNamespace(this.#o.parse.policy, dir.namespace);
    return refused === undefined ? dir : { ...dir, namespace, refusedNamespace: refused };
  }

  #source(commit: string, path: string): { repository: string; revision: string; path: string } {
    return { repository: this.#o.repository.display, revision: `${this.#o.branch}@sha1:${commit}`, path };
  }

  /**
   * Queues one of the poll's records. The cursor moves past a directory only once its record is
   * pushed, so a record lost before that is derived again by the next poll: it needs no fsync.
   */
  #record(record: ResultRecord): Promise<void> {
    return this.#o.results.write(record, { rederivable: true });
  }

  /** Pushes pending results; counts the outcome. Throws when the push fails. */
  async #flush(): Promise<void> {
    const metrics = this.#o.metrics;
    try {
      const report = await this.#o.results.flush();
      if (report.records > 0) {
        for (let i = 0; i < report.replays; i++) metrics?.gitPush('rejected');
        metrics?.gitPush('success');
      }
    } catch (error) {
      metrics?.gitPush(error instanceof GitAccessError && error.kind === 'rejected' ? 'rejected' : 'error');
      throw error;
    } finally {
      metrics?.setPendingResults(this.#o.results.pending);
    }
  }
}

/** A Transaction created (or adopted) from a directory: later decisions of the poll need its uid. */
type Materialized = { uid: string };

function withSequence(transaction: Transaction, sequence: number): Transaction {
  const annotations = { ...transaction.metadata.annotations, [ANNOTATION_SOURCE_SEQUENCE]: String(sequence) };
  return { ...transaction, metadata: { ...transaction.metadata, annotations } };
}

/** The annotation value: the ROLLBACK file's text, bounded; its location when it is empty. */
export function rollbackReason(text: string, file: string, commit: string): string {
  const reason = text.trim();
  if (reason === '') return `ROLLBACK file ${file} added in ${commit}`;
  return reason.length <= 1024 ? reason : `${reason.slice(0, 1023)}…`;
}

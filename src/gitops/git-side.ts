/**
 * The Git side of one leadership term: the results writer and reporter, the materializer and
 * its poller, wired together and started in the order their guarantees need, and stopped in
 * reverse. Everything here runs only while this replica leads.
 */
import type { Transaction } from '../api/v1alpha1/index.ts';
import { isTerminal } from '../api/v1alpha1/index.ts';
import { type CommitStatusSettings, startCommitStatuses } from '../commit-status/term.ts';
import type { TransactionCache } from '../controller/transaction-cache.ts';
import type { GitRepository } from '../git/repository.ts';
import type { SigningKeySource } from '../git/signing-key-file.ts';
import type { KubeClient } from '../kube/client.ts';
import { CORE_MAPPINGS, Discovery, Objects } from '../kube/resources.ts';
import { describeError, type Logger } from '../log/index.ts';
import type { Metrics } from '../metrics/index.ts';
import { ResultsReporter } from '../results/reporter.ts';
import type { ResultContext } from '../results/result-context.ts';
import type { ResultRecord } from '../results/result-record.ts';
import { readResultFiles } from '../results/results-reader.ts';
import { ResultsWriter } from '../results/writer.ts';
import type { CheckResult } from '../server/health.ts';
import { KubeTransactionApi } from './cluster-transactions.ts';
import { describeSuspension, type Suspension } from './git-control.ts';
import { GitControlWatch } from './git-control-watch.ts';
import { Materializer, type PollSummary, type ResultSink } from './materializer.ts';
import type { ParseOptions } from './options.ts';
import type { PollBudget } from './poll-budget.ts';
import { Poller } from './poller.ts';
import type { SignatureGate } from './signature-gate.ts';
import type { SourcePoll, SourceStep, SourceStepContext } from './source-step.ts';
import { ConfigMapCursorStore } from './state.ts';

/** What one poll did: read the branch (and stepped its sources), or nothing because the Git side is suspended. */
export type GitPoll = (PollSummary & { sources?: SourcePoll }) | { suspended: Suspension };

export interface GitSideOptions {
  /** The controller identity. */
  client: KubeClient;
  /** The process's Transaction cache: the reporter follows it. */
  cache: TransactionCache;
  repository: GitRepository;
  branch: string;
  root: string;
  resultsBranch: string;
  parse: ParseOptions;
  /** What one poll may read. */
  budget?: PollBudget;
  /** --verify-signatures; undefined: commits are not checked. */
  signatures?: SignatureGate | undefined;
  /** --results-signing-key-file; undefined: results commits are unsigned. */
  resultsSigningKey?: SigningKeySource | undefined;
  initial: 'baseline' | 'apply';
  pollIntervalMs: number;
  /** Where the cursor ConfigMap lives. */
  controllerNamespace: string;
  /**
   * This installation's instance: the Transactions it creates carry it, and its cursor and
   * control ConfigMaps are its own (src/controller/installation.ts).
   */
  instance: string | undefined;
  context: ResultContext;
  metrics: Metrics;
  log: Logger;
  /** Statuses on the source commits; off when undefined. */
  commitStatus?: CommitStatusSettings | undefined;
  /** Called with each record the materializer queued (a rejection notifies: src/notify). */
  onResultWritten?: ((record: ResultRecord) => void) | undefined;
  /** The sources step (src/sources/, built by the manager); undefined: no sources are read. */
  sources?: ((context: SourceStepContext) => SourceStep) | undefined;
}

export interface GitSide {
  readonly poller: Poller<GitPoll>;
  /** The `git-reachable` readiness check: the poller's, or "not checked" while suspended. */
  readiness(): CheckResult;
  /** Whether a Transaction's outcome is on the results branch (retention waits for it). */
  isRecorded(txn: Transaction): boolean;
  stop(): Promise<void>;
}

/**
 * Starts the Git side. The reporter starts first (it owns every transaction's result file and
 * must know what the results branch holds); the poller starts once this repository's
 * Transactions are listed, since a lost cursor's sequence floor is read from them.
 */
export async function startGitSide(o: GitSideOptions, signal: AbortSignal): Promise<GitSide> {
  const writer = await ResultsWriter.open({
    repository: o.repository,
    branch: o.resultsBranch,
    signingKey: o.resultsSigningKey,
    logger: o.log.child({ component: 'results' }),
  });
  const statuses = await startCommitStatuses(o.commitStatus, {
    stateDir: o.repository.stateDir,
    userAgent: `janus/${o.context.controllerVersion}`,
    log: o.log.child({ component: 'commit-status' }),
    onResult: o.metrics.commitStatus,
  });
  const reporter = new ResultsReporter({
    client: o.client,
    cache: o.cache,
    repository: o.repository.display,
    writer,
    readRecorded: (keys) => readResultFiles(o.repository, o.resultsBranch, keys),
    context: o.context,
    log: o.log.child({ component: 'reporter' }),
    onPending: o.metrics.setPendingResults,
    listeners: [
      ...statuses.listeners,
      {
        // A source waits for its transaction: its end is a poll at once (the outcome, then the next commit).
        observe: (txn) => {
          if (txn.spec.sourceRef && isTerminal(txn.status?.phase) && sources?.awaits(txn))
            poller.trigger('source transaction ended');
        },
        forget: () => {},
      },
    ],
  });
  reporter.start();
  const source = {
    repository: o.repository.display,
    branch: o.branch,
    root: o.root,
    ...(o.instance !== undefined && { instance: o.instance }),
  };
  const objects = new Objects(o.client, new Discovery(o.client));
  for (const mapping of CORE_MAPPINGS) objects.discovery.seed(mapping);
  const results: ResultSink = {
    branch: writer.branch,
    get pending() {
      return writer.pending;
    },
    write: async (record, options) => {
      await statuses.beforeResult(record);
      await writer.write(record, options);
      o.onResultWritten?.(record); // once queued: a rejection notifies (src/notify)
    },
    flush: () => writer.flush(),
  };
  const transactions = new KubeTransactionApi(objects, o.instance);
  const materializer = new Materializer({
    repository: o.repository,
    branch: o.branch,
    root: o.root,
    parse: o.parse,
    ...(o.budget && { budget: o.budget }),
    signatures: o.signatures,
    initial: o.initial,
    cluster: transactions,
    cursor: new ConfigMapCursorStore(objects, o.controllerNamespace, source),
    results,
    recordMaterialized: (txn) => reporter.recordMaterialized(txn),
    sequenceFloor: () => reporter.nextSequenceFloor(),
    context: o.context,
    log: o.log.child({ component: 'materializer' }),
    metrics: o.metrics,
  });
  const sources = o.sources?.({
    objects,
    transactions,
    results,
    cachedTransaction: (namespace, name) => o.cache.get(`${namespace}/${name}`),
    recordMaterialized: (txn) => reporter.recordMaterialized(txn),
    cursor: materializer,
    log: o.log.child({ component: 'sources' }),
  });
  const control = new GitControlWatch({
    client: o.client,
    objects,
    namespace: o.controllerNamespace,
    source,
    log: o.log.child({ component: 'git-control' }),
    onPollRequested: () => poller.trigger('requested'),
    onSuspensionChanged: (suspension) => {
      o.metrics.setGitSuspended(suspension !== undefined);
      if (!suspension) poller.trigger('resumed');
    },
  });
  const poller = new Poller<GitPoll>({
    poll: async () => {
      const request = control.pendingRequest();
      const suspension = control.suspension();
      if (suspension) {
        await control.record(request, { result: `not polled: ${describeSuspension(suspension)}`, ok: false });
        return { suspended: suspension };
      }
      try {
        const summary: GitPoll = await materializer.poll();
        if (sources) summary.sources = await sources.poll(summary.stoppedAt ?? summary.tip);
        await control.record(request, { commit: summary.tip, result: describePoll(summary), ok: true });
        return summary;
      } catch (error) {
        await control.record(request, { result: describeError(error).message, ok: false });
        throw error;
      }
    },
    intervalMs: o.pollIntervalMs,
    isIdle: (result) => 'history' in result && result.history === 'idle' && !sourcesActed(result.sources),
    isSkipped: (result) => 'suspended' in result,
    hasMore: (result) => 'stoppedAt' in result && result.stoppedAt !== undefined,
    metrics: o.metrics,
    log: o.log.child({ component: 'poller' }),
  });
  const listed = await Promise.race([
    reporter.waitForSync(),
    new Promise<false>((resolve) => signal.addEventListener('abort', () => resolve(false), { once: true })),
  ]);
  if (listed && !signal.aborted) await control.start(signal);
  if (listed && !signal.aborted) poller.start();
  return {
    poller,
    // A source's transaction is also kept until its outcome is in its Source's status.
    isRecorded: (txn) => reporter.isRecorded(txn) && (sources?.isSettled(txn) ?? true),
    readiness() {
      const suspension = control.suspension();
      if (!suspension) return poller.readiness();
      const note = `not checked: the Git side is ${describeSuspension(suspension)}`;
      return { ok: true, detail: note, note };
    },
    async stop() {
      await poller.stop();
      sources?.stop();
      await control.stop();
      await reporter.stop();
      await statuses.stop();
      await writer.close();
    },
  };
}

/** Whether the sources step did anything a person would want logged. */
function sourcesActed(s: SourcePoll | undefined): boolean {
  return s !== undefined && s.transactions + s.renderFailed + s.refused + s.rejected + s.deleted > 0;
}

/** One line for the control object: what a poll did. */
export function describePoll(summary: PollSummary & { sources?: SourcePoll }): string {
  const sources = describeSources(summary.sources);
  if (summary.history === 'idle') return sources ? `nothing new; ${sources}` : 'nothing new';
  if (summary.history === 'baseline')
    return `first run: ${summary.baseline} directories recorded as baseline`;
  const parts = [
    `${summary.commits} new commit${summary.commits === 1 ? '' : 's'}`,
    summary.materialized > 0 && `${summary.materialized} materialized`,
    summary.rejected > 0 && `${summary.rejected} rejected`,
    summary.rollbacks > 0 && `${summary.rollbacks} rollback request${summary.rollbacks === 1 ? '' : 's'}`,
    summary.notices > 0 && `${summary.notices} notice${summary.notices === 1 ? '' : 's'}`,
    summary.stoppedAt && `read up to ${summary.stoppedAt} (the poll's budget); the rest at the next poll`,
    sources,
  ].filter(Boolean);
  return parts.join(', ');
}

function describeSources(s: SourcePoll | undefined): string {
  if (!s || !sourcesActed(s)) return '';
  const parts = [
    s.transactions > 0 && `${s.transactions} source transaction${s.transactions === 1 ? '' : 's'}`,
    s.renderFailed > 0 && `${s.renderFailed} render${s.renderFailed === 1 ? '' : 's'} failed`,
    s.refused > 0 && `${s.refused} render${s.refused === 1 ? '' : 's'} refused`,
    s.rejected > 0 && `${s.rejected} source file${s.rejected === 1 ? '' : 's'} rejected`,
    s.deleted > 0 && `${s.deleted} Source${s.deleted === 1 ? '' : 's'} deleted`,
  ].filter(Boolean);
  return parts.join(', ');
}

/**
 * The Git side of one leadership term: the results writer and reporter, the materializer and
 * its poller, wired together and started in the order their guarantees need, and stopped in
 * reverse. Everything here runs only while this replica leads.
 */
import type { GitRepository } from '../git/repository.ts';
import type { KubeClient } from '../kube/client.ts';
import { CORE_MAPPINGS, Discovery, Objects } from '../kube/resources.ts';
import type { Logger } from '../log/index.ts';
import type { Metrics } from '../metrics/index.ts';
import { ResultsReporter } from '../results/reporter.ts';
import type { ResultContext } from '../results/result-context.ts';
import { readResultFiles } from '../results/results-reader.ts';
import { ResultsWriter } from '../results/writer.ts';
import { KubeTransactionApi } from './cluster-transactions.ts';
import { Materializer, type PollSummary } from './materializer.ts';
import type { ParseOptions } from './options.ts';
import { Poller } from './poller.ts';
import { ConfigMapCursorStore } from './state.ts';

export interface GitSideOptions {
  /** The controller identity. */
  client: KubeClient;
  repository: GitRepository;
  branch: string;
  root: string;
  resultsBranch: string;
  parse: ParseOptions;
  initial: 'baseline' | 'apply';
  pollIntervalMs: number;
  /** Where the cursor ConfigMap lives. */
  controllerNamespace: string;
  /** Only Transactions in this namespace are reported; all when undefined. */
  watchNamespace: string | undefined;
  context: ResultContext;
  metrics: Metrics;
  log: Logger;
}

export interface GitSide {
  readonly poller: Poller<PollSummary>;
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
    logger: o.log.child({ component: 'results' }),
  });
  const reporter = new ResultsReporter({
    client: o.client,
    repository: o.repository.display,
    writer,
    readRecorded: (keys) => readResultFiles(o.repository, o.resultsBranch, keys),
    context: o.context,
    watchNamespace: o.watchNamespace,
    log: o.log.child({ component: 'reporter' }),
    onPending: o.metrics.setPendingResults,
  });
  reporter.start();
  const objects = new Objects(o.client, new Discovery(o.client));
  for (const mapping of CORE_MAPPINGS) objects.discovery.seed(mapping);
  const materializer = new Materializer({
    repository: o.repository,
    branch: o.branch,
    root: o.root,
    parse: o.parse,
    initial: o.initial,
    cluster: new KubeTransactionApi(objects),
    cursor: new ConfigMapCursorStore(objects, o.controllerNamespace, {
      repository: o.repository.display,
      branch: o.branch,
      root: o.root,
    }),
    results: writer,
    recordMaterialized: (txn) => reporter.recordMaterialized(txn),
    sequenceFloor: () => reporter.nextSequenceFloor(),
    context: o.context,
    log: o.log.child({ component: 'materializer' }),
    metrics: o.metrics,
  });
  const poller = new Poller<PollSummary>({
    poll: () => materializer.poll(),
    intervalMs: o.pollIntervalMs,
    isIdle: (summary) => summary.history === 'idle',
    metrics: o.metrics,
    log: o.log.child({ component: 'poller' }),
  });
  const listed = await Promise.race([
    reporter.waitForSync(),
    new Promise<false>((resolve) => signal.addEventListener('abort', () => resolve(false), { once: true })),
  ]);
  if (listed && !signal.aborted) poller.start();
  return {
    poller,
    async stop() {
      await poller.stop();
      await reporter.stop();
      await writer.close();
    },
  };
}

import type { Phase, TerminalPhase } from '../api/v1alpha1/index.ts';
import type { RequestRecord } from '../kube/connection.ts';
import type { SlotRunnerMetrics } from '../runtime/slot-runner.ts';
import type { WebhookOutcome, WebhookProvider } from '../webhook/index.ts';
import { ActiveTransactions, type PhaseCounts } from './active-transactions.ts';
import { type ControllerInstruments, controllerInstruments } from './controller-instruments.ts';
import { type GitInstruments, gitInstruments } from './git-instruments.ts';
import {
  type KubeRequestInstruments,
  kubeRequestInstruments,
  type RequestSource,
  recordKubeRequest,
} from './kube-requests.ts';
import type {
  AnalysisResult,
  CommitStatusResult,
  GitPollResult,
  GitPushResult,
  HealthCheckKind,
  HealthCheckResult,
  ItemOperation,
  LockOperation,
  OperationResult,
  ReconcileResult,
} from './labels.ts';
import { COMMIT_STATUS_RESULTS } from './labels.ts';
import {
  NOTIFICATION_RESULTS,
  type NotificationInstruments,
  type NotificationResult,
  notificationInstruments,
} from './notification-instruments.ts';
import { collectDefaultMetrics, Registry } from './prom.ts';
import { type TransactionInstruments, transactionInstruments } from './transaction-instruments.ts';
import {
  bindWorkQueue,
  type WorkQueueInstruments,
  type WorkQueueMetrics,
  workQueueInstruments,
} from './workqueue.ts';

export const DEFAULT_LEADER_LEASE = 'janus-system/janus-controller';

export interface MetricsOptions {
  /** Also export process and Node.js runtime metrics (CPU, memory, FDs, event-loop lag, GC) as `janus_*`. */
  readonly defaultMetrics?: boolean;
  /** The clock behind `janus_git_last_poll_timestamp_seconds`, in ms since the epoch. Default `Date.now`. */
  readonly now?: () => number;
  /**
   * The leader Lease, `<namespace>/<name>`, as the label `lease` of `janus_leader`: "exactly one
   * leader" holds per Lease, so several installations scraped together are told apart. Default
   * `janus-system/janus-controller`.
   */
  readonly leaderLease?: string;
}

/**
 * Every metric Janus exports (docs/metrics.md lists them), on a registry of its own: the global
 * prom-client registry throws "already registered" when a module is evaluated twice (tests, two
 * instances in one process), and would mix in metrics of any library that uses it.
 *
 * The recording methods take the closed label sets of labels.ts, and are bound: pass them on as
 * callbacks as they are, e.g. `onResult: metrics.webhookRequest`, `onEvent: metrics.lockOperation`.
 */
export class Metrics {
  readonly registry: Registry = new Registry();
  readonly #now: () => number;
  readonly #transactions: TransactionInstruments;
  readonly #active: ActiveTransactions;
  readonly #git: GitInstruments;
  readonly #workQueues: WorkQueueInstruments;
  readonly #kube: KubeRequestInstruments;
  readonly #controller: ControllerInstruments;
  readonly #notifications: NotificationInstruments;

  constructor(options: MetricsOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#transactions = transactionInstruments(this.registry);
    this.#active = new ActiveTransactions(this.registry);
    this.#git = gitInstruments(this.registry);
    this.#workQueues = workQueueInstruments(this.registry);
    this.#kube = kubeRequestInstruments(this.registry);
    this.#controller = controllerInstruments(this.registry, options.leaderLease ?? DEFAULT_LEADER_LEASE);
    this.#notifications = notificationInstruments(this.registry);
    if (options.defaultMetrics) collectDefaultMetrics(this.registry, 'janus_');
  }

  /** The Content-Type of `text()`: the Prometheus text format 0.0.4. */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** The exposition text for `GET /metrics`. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  // --- Transactions -------------------------------------------------------------------------

  /** The controller moved a transaction from one phase to another. */
  readonly transition = (from: Phase, to: Phase): void => {
    this.#transactions.transitions.inc({ from_phase: from, to_phase: to });
  };

  /** A transaction reached a terminal phase `seconds` after it started. */
  readonly transactionFinished = (outcome: TerminalPhase, seconds: number): void => {
    this.#transactions.duration.observe({ outcome }, seconds);
  };

  /** Replaces the per-phase counts; phases missing from `counts` become 0. Feed it from the informer cache. */
  readonly setActiveTransactions = (counts: PhaseCounts): void => {
    this.#active.set(counts);
  };

  /** Alternative to setActiveTransactions: read the counts at each scrape (a cache lookup, no I/O). */
  readonly readActiveTransactionsFrom = (source: () => PhaseCounts): void => {
    this.#active.readFrom(source);
  };

  /**
   * A Transaction's status was written by another live installation of this one's instance: two
   * installations serve its namespace (docs/operations.md, Several installations).
   */
  readonly installationConflict = (): void => {
    this.#controller.installationConflicts.inc();
  };

  /** The retention policy deleted a finished Transaction. */
  readonly transactionPruned = (): void => {
    this.#transactions.pruned.inc();
  };

  /** One saga step on one target resource. */
  readonly itemOperation = (operation: ItemOperation, result: OperationResult): void => {
    this.#transactions.itemOperations.inc({ operation, result });
  };

  /** One operation on a lock Lease. */
  readonly lockOperation = (operation: LockOperation, result: OperationResult): void => {
    this.#transactions.lockOperations.inc({ operation, result });
  };

  /** The health gate's check ended after `seconds`. */
  readonly healthCheck = (check: HealthCheckKind, result: HealthCheckResult, seconds: number): void => {
    this.#transactions.healthCheck.observe({ check, result }, seconds);
  };

  /** A metric analysis check measured once. */
  readonly analysisMeasurement = (result: AnalysisResult): void => {
    this.#transactions.analysisMeasurements.inc({ result });
  };

  /** The controller's measurement runner: measurements running and waiting for a slot. */
  readonly measurementSlots: SlotRunnerMetrics = {
    running: (n) => this.#transactions.measurementSlots.set({ state: 'running' }, n),
    waiting: (n) => this.#transactions.measurementSlots.set({ state: 'waiting' }, n),
  };

  /** A transaction with `changes` changes started. */
  readonly itemCount = (changes: number): void => {
    this.#transactions.itemCount.observe(changes);
  };

  // --- Git ----------------------------------------------------------------------------------

  /** A poll of the watched branch ended; a successful one also moves the last-poll timestamp. */
  readonly gitPoll = (result: GitPollResult, seconds: number): void => {
    this.#git.polls.inc({ result });
    this.#git.pollDuration.observe(seconds);
    if (result === 'success') this.#git.lastPoll.set(this.#now() / 1000);
  };

  /** A push to the results branch ended. */
  readonly gitPush = (result: GitPushResult): void => {
    this.#git.pushes.inc({ result });
  };

  /** How many outcomes wait to be written to the results branch. */
  readonly setPendingResults = (count: number): void => {
    this.#git.pendingResults.set(count);
  };

  /** The Git side was suspended (true) or resumed (false). */
  readonly setGitSuspended = (suspended: boolean): void => {
    this.#git.suspended.set(suspended ? 1 : 0);
  };

  /** One commit status delivery attempt ended (src/commit-status/reporter.ts); `undefined`: none yet, show zeros. */
  readonly commitStatus = (provider: string, result: CommitStatusResult | undefined): void => {
    if (result) this.#git.commitStatuses.inc({ provider, result });
    else for (const r of COMMIT_STATUS_RESULTS) this.#git.commitStatuses.inc({ provider, result: r }, 0);
  };

  /**
   * The drifted objects of a Source at its last check; undefined: the Source is gone (or no
   * longer checked), its series removed. Bounded by the Sources one repository declares (128).
   */
  readonly setSourceDrift = (namespace: string, source: string, count: number | undefined): void => {
    if (count === undefined) this.#git.sourceDriftedObjects.remove({ namespace, source });
    else this.#git.sourceDriftedObjects.set({ namespace, source }, count);
  };

  /** One webhook request; matches the webhook handler's `onResult`. */
  readonly webhookRequest = (provider: WebhookProvider | 'unknown', outcome: WebhookOutcome): void => {
    this.#git.webhookRequests.inc({ provider, outcome });
  };

  // --- Notifications ------------------------------------------------------------------------

  /**
   * One notification delivery try ended (sent, retried, failed) or was dropped; `undefined`: a
   * configured provider, none yet: show zeros, so its series exist for the alert's `unless`.
   */
  readonly notification = (provider: string, result: NotificationResult | undefined): void => {
    if (result) this.#notifications.deliveries.inc({ provider, result });
    else for (const r of NOTIFICATION_RESULTS) this.#notifications.deliveries.inc({ provider, result: r }, 0);
  };

  // --- Work queues and the Kubernetes API ----------------------------------------------------

  /** The metrics of the work queue called `name`, e.g. `transactions`. */
  readonly workQueueMetrics = (name: string): WorkQueueMetrics => bindWorkQueue(this.#workQueues, name);

  /** One completed Kubernetes API request. */
  readonly kubeRequest = (record: RequestRecord): void => {
    recordKubeRequest(this.#kube, record);
  };

  /** Counts every request made through `connection`; returns the function that stops it. */
  readonly observeKubeRequests = (connection: RequestSource): (() => void) =>
    connection.observe(this.kubeRequest);

  // --- Controller ---------------------------------------------------------------------------

  /** One reconcile of one Transaction ended. */
  readonly reconcile = (result: ReconcileResult, seconds: number): void => {
    this.#controller.reconciles.inc({ result });
    this.#controller.reconcileDuration.observe(seconds);
  };

  /** This replica gained or lost the leader Lease. */
  readonly setLeader = (leading: boolean): void => {
    this.#controller.setLeader(leading);
  };
}

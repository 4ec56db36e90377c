/**
 * The Transaction controller: the Transaction cache (transaction-cache.ts) feeds a keyed work
 * queue whose workers run the reconciler, so independent transactions proceed in parallel and one
 * transaction never has two reconciles at once.
 */
import type { AnalysisPolicy, Measurement } from '../analysis/index.ts';
import {
  ANNOTATION_SOURCE_REPOSITORY,
  isTerminal,
  type Phase,
  sourceSequence,
  type Transaction,
} from '../api/v1alpha1/index.ts';
import type { KubeClient } from '../kube/client.ts';
import { EventRecorder } from '../kube/events.ts';
import { CORE_MAPPINGS, Discovery, Objects } from '../kube/resources.ts';
import { TRANSACTION_MAPPING } from '../kube/transactions.ts';
import { LeaseLocks, type LockEvent } from '../locks/lease-locks.ts';
import { LockTables } from '../locks/lock-table.ts';
import type { Logger } from '../log/index.ts';
import { Pruner, type RetentionOptions } from '../retention/pruner.ts';
import { RollbackStore } from '../rollback-store/store.ts';
import type { SlotCaps } from '../runtime/slot-rules.ts';
import type { SlotRunner, SlotRunnerMetrics } from '../runtime/slot-runner.ts';
import { WorkQueue, type WorkQueueMetrics } from '../runtime/work-queue.ts';
import { inAnalysisWindow } from '../saga/analysis-window.ts';
import { decide } from '../saga/decide.ts';
import { resolveTarget, targetKey } from '../saga/targets.ts';
import { noSagaMetrics, type SagaDeps, type SagaMetrics } from './context.ts';
import { HealthWatch } from './health-watch.ts';
import { HeldLocks } from './held-locks.ts';
import { measurementRunner } from './measurements.ts';
import { Reconciler } from './reconciler.ts';
import { ServiceAccounts } from './service-accounts.ts';
import { isCompact, isWithoutContent, readInFull, type TransactionCache } from './transaction-cache.ts';
import { ViewRole } from './view-role.ts';
import { WriteHistory } from './write-history.ts';

export interface ControllerMetrics extends SagaMetrics {
  lockOperation: LockEvent;
  workQueue?: WorkQueueMetrics;
  /** Metric measurements running and waiting for a slot (controller/measurements.ts). */
  measurements?: SlotRunnerMetrics;
  activeTransactions?(counts: Partial<Record<Phase, number>>): void;
  reconcile?(result: 'success' | 'error' | 'requeue', seconds: number): void;
}

export interface ControllerOptions {
  /** The controller's own identity. */
  client: KubeClient;
  /** Where locks of cluster-scoped targets live (the controller's namespace). */
  controllerNamespace: string;
  /**
   * This installation's Transactions (only those of its instance, in the namespace it watches):
   * listed, watched, reconciled and pruned. Shared; the manager starts and stops it.
   */
  cache: TransactionCache;
  /**
   * What metric analysis may query and read; by default no address, and templates of the
   * Transaction's own namespace and the controller's.
   */
  analysis?: AnalysisPolicy | undefined;
  /**
   * Whether an installation in this namespace holds a live claim on this instance (the manager's
   * InstanceClaims); a Transaction such a one wrote is not driven here. None when undefined.
   */
  isLiveInstallation?: ((namespace: string) => boolean) | undefined;
  /** Kinds besides Secret SOPS content may be applied to (--sops-kinds); none when undefined. */
  sopsKinds?: readonly string[] | undefined;
  /** Transactions reconciled at once. */
  concurrency: number;
  log: Logger;
  metrics?: ControllerMetrics | undefined;
  /** Name reported in Events (the pod name in a cluster). */
  reportingInstance?: string | undefined;
  /** Prune finished Transactions by this policy (src/retention); never when undefined. */
  retention?: RetentionOptions | undefined;
  /** Caps of the measurement runner (controller/measurements.ts); its defaults when undefined. */
  measurementCaps?: SlotCaps | undefined;
  now?: () => number;
}

export class TransactionController {
  readonly #cache: TransactionCache;
  readonly #client: KubeClient;
  readonly #queue: WorkQueue;
  readonly #reconciler: Reconciler;
  readonly #history = new WriteHistory();
  readonly #log: Logger;
  readonly #metrics: ControllerMetrics | undefined;
  readonly #discovery: Discovery;
  readonly #deps: SagaDeps;
  readonly #health: HealthWatch;
  readonly #pruner: Pruner | undefined;
  readonly #measurements: SlotRunner<Measurement>;
  #gaugeTimer: NodeJS.Timeout | undefined;
  #unregister: (() => void) | undefined;

  constructor(opts: ControllerOptions) {
    this.#cache = opts.cache;
    this.#client = opts.client;
    this.#log = opts.log;
    this.#metrics = opts.metrics;
    const now = opts.now ?? Date.now;
    this.#discovery = new Discovery(opts.client);
    for (const m of CORE_MAPPINGS) this.#discovery.seed(m);
    this.#discovery.seed(TRANSACTION_MAPPING);
    const locks = new LeaseLocks(opts.client, {
      now,
      ...(opts.metrics && { onEvent: opts.metrics.lockOperation }),
    });
    // Created before the queue it wakes; the queue exists by the time a watch delivers.
    this.#health = new HealthWatch({
      client: opts.client,
      discovery: this.#discovery,
      wake: (key) => this.#queue.add(key),
      log: opts.log,
    });
    this.#measurements = measurementRunner({
      caps: opts.measurementCaps,
      metrics: opts.metrics?.measurements,
      logger: opts.log,
    });
    const objects = new Objects(opts.client, this.#discovery);
    const deps: SagaDeps = {
      client: opts.client,
      objects,
      locks,
      lockTables: new LockTables(opts.client),
      store: new RollbackStore(opts.client),
      events: new EventRecorder(opts.client, {
        component: 'janus-controller',
        instance: opts.reportingInstance ?? 'janus-controller',
        onError: (e) => opts.log.warn({ err: e }, 'could not record an Event'),
      }),
      metrics: opts.metrics ?? noSagaMetrics,
      log: opts.log,
      now,
      controllerNamespace: opts.controllerNamespace,
      isLiveInstallation: opts.isLiveInstallation ?? (() => false),
      analysis: opts.analysis ?? { allowedAddresses: [], templateNamespaces: [opts.controllerNamespace] },
      sopsKinds: opts.sopsKinds ?? [],
      viewRole: new ViewRole(opts.client, now),
      serviceAccounts: new ServiceAccounts(opts.client, now),
      heldLocks: new HeldLocks({ locks, now, log: opts.log }),
      health: this.#health,
      measurements: this.#measurements,
      wake: (key) => this.#queue.add(key),
      queuedAhead: (txn, keys) => this.#queuedAhead(txn, keys),
      onWrite: (txn) => this.#history.wrote(keyOf(txn), txn.metadata.resourceVersion),
    };
    this.#reconciler = new Reconciler(deps);
    this.#deps = deps;
    this.#pruner =
      opts.retention &&
      new Pruner({
        ...opts.retention,
        objects: deps.objects,
        list: () => this.#cache.list(),
        log: opts.log,
        now,
      });
    this.#queue = new WorkQueue({
      handler: (key) => this.#handle(key),
      concurrency: opts.concurrency,
      // Namespaces take turns for the workers: one tenant's thousand Transactions wait behind
      // each other, not in front of another tenant's one.
      groupOf: (key) => key.slice(0, key.indexOf('/')),
      logger: opts.log,
      metrics: opts.metrics?.workQueue,
    });
  }

  /** Follows the cache: every Transaction it holds is queued now (or when it has listed them). */
  start(): void {
    this.#unregister = this.#cache.addHandlers({
      onAdd: (_obj, key) => this.#queue.add(key),
      onUpdate: (_old, _obj, key) => this.#queue.add(key),
      onDelete: (obj, key) => {
        this.#history.forget(key);
        this.#measurements.cancel(ownerOf(obj));
      },
    });
    this.#gaugeTimer = setInterval(() => this.#updateActiveGauge(), 5_000);
    this.#pruner?.start();
  }

  /** One retention sweep now (the pruner also sweeps on its own interval); the number pruned. */
  prune(): Promise<number> {
    return this.#pruner?.sweep() ?? Promise.resolve(0);
  }

  async stop(): Promise<void> {
    this.#unregister?.();
    clearInterval(this.#gaugeTimer);
    await this.#pruner?.stop();
    // Measurements in flight are aborted, not waited for: no reconcile waits on them either.
    this.#measurements.stop();
    await this.#queue.shutdown();
    this.#deps.heldLocks.stop();
    await this.#health.stop();
  }

  hasSynced(): boolean {
    return this.#cache.hasSynced();
  }

  async #handle(key: string): Promise<{ requeueAfterMs?: number } | undefined> {
    const txn = this.#cache.get(key);
    if (!txn) return undefined;
    // A watch lagging behind our own writes must not make us act on a state we already left.
    if (this.#history.isStale(key, txn.metadata.resourceVersion)) return undefined;
    this.#history.read(key, txn.metadata.resourceVersion);
    const started = performance.now();
    try {
      const full = isCompact(txn)
        ? await this.#fullIfActionable(txn)
        : isWithoutContent(txn)
          ? await readInFull(this.#client, txn)
          : txn;
      if (!full) {
        this.#measurements.cancel(ownerOf(txn));
        return undefined;
      }
      const result = await this.#reconciler.reconcile(full);
      // Out of its bake window (committed, rolling back, cancelled): its measurements are of no use.
      if (!inAnalysisWindow(result.txn ?? full)) this.#measurements.cancel(ownerOf(full));
      const seconds = (performance.now() - started) / 1000;
      this.#metrics?.reconcile?.(result.requeueAfterMs !== undefined ? 'requeue' : 'success', seconds);
      return result.requeueAfterMs !== undefined ? { requeueAfterMs: result.requeueAfterMs } : undefined;
    } catch (e) {
      this.#metrics?.reconcile?.('error', (performance.now() - started) / 1000);
      this.#log.warn({ err: e, transaction: key }, 'reconcile failed; retrying with backoff');
      throw e;
    }
  }

  /** A finished transaction's full object, read only when decide() has something to do with it. */
  async #fullIfActionable(compact: Transaction): Promise<Transaction | undefined> {
    const step = decide(compact, Date.now());
    if (step.do === 'nothing') return undefined;
    if (step.do === 'wait') return compact; // the reconciler only schedules the wake-up
    return readInFull(this.#client, compact);
  }

  /** Git order: an unfinished transaction from the same repository, earlier in it, sharing a target. */
  async #queuedAhead(txn: Transaction, keys: ReadonlySet<string>): Promise<string | undefined> {
    const repository = txn.metadata.annotations?.[ANNOTATION_SOURCE_REPOSITORY];
    const sequence = sourceSequence(txn.metadata.annotations);
    if (!repository || sequence === undefined) return undefined;
    for (const other of this.#cache.list()) {
      const annotations = other.metadata.annotations ?? {};
      if (annotations[ANNOTATION_SOURCE_REPOSITORY] !== repository) continue;
      const ahead = sourceSequence(annotations);
      if (ahead === undefined || ahead >= sequence) continue;
      if (other.metadata.deletionTimestamp || isTerminal(other.status?.phase)) continue;
      for (const change of other.spec.changes) {
        const mapping = await this.#discovery
          .mapping(change.target.apiVersion, change.target.kind)
          .catch(() => undefined);
        const key = targetKey(
          resolveTarget(change.target, other.metadata.namespace ?? '', mapping?.namespaced ?? true),
        );
        if (keys.has(key)) return `transaction ${keyOf(other)}`;
      }
    }
    return undefined;
  }

  #updateActiveGauge(): void {
    if (!this.#metrics?.activeTransactions) return;
    const counts: Partial<Record<Phase, number>> = {};
    for (const txn of this.#cache.list()) {
      const phase = txn.status?.phase ?? 'Pending';
      if (!isTerminal(phase)) counts[phase] = (counts[phase] ?? 0) + 1;
    }
    this.#metrics.activeTransactions(counts);
  }
}

/** Whose measurements: the Transaction's uid (stages/analysis.ts), so a new one of the name never inherits. */
function ownerOf(txn: Transaction): string {
  return txn.metadata.uid ?? keyOf(txn);
}

function keyOf(txn: Transaction): string {
  return `${txn.metadata.namespace}/${txn.metadata.name}`;
}

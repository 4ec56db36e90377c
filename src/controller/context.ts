/**
 * What a saga stage works with: the controller's clients and services (SagaDeps), and, per
 * reconcile of one Transaction, its resolved changes and the writes of its own status (SagaRun).
 */
import type { AnalysisPolicy, Measurement } from '../analysis/index.ts';
import {
  isTerminal,
  type Phase,
  type TerminalPhase,
  TRANSACTION_UID_EXTRA,
  type Transaction,
  type TransactionStatus,
} from '../api/v1alpha1/index.ts';
import type { ChangeContext, ChangeItem } from '../changes/change-context.ts';
import type { KubeClient } from '../kube/client.ts';
import { PatchType } from '../kube/client.ts';
import { refusalOf } from '../kube/errors.ts';
import type { EventSink, EventType } from '../kube/events.ts';
import { type Objects, type ResourceMapping, UnknownKindError } from '../kube/resources.ts';
import { nameOf, Transactions } from '../kube/transactions.ts';
import type { LeaseLocks, LockKey } from '../locks/lease-locks.ts';
import { leaseName, leaseNamespace } from '../locks/lease-name.ts';
import { type LockTables, lockTableKey } from '../locks/lock-table.ts';
import type { Logger } from '../log/index.ts';
import type { RollbackStore } from '../rollback-store/store.ts';
import type { SlotRunner } from '../runtime/slot-runner.ts';
import { fitStatus, refusedDetail, refusedStatus, STATUS_WRITE_REFUSED } from '../saga/fit-status.ts';
import {
  type ConditionSpec,
  type PhaseDetail,
  progressOf,
  transitionPath,
  withPhase,
} from '../saga/status.ts';
import { resolveTarget, serviceAccountUser } from '../saga/targets.ts';
import type { HealthReader } from './health-watch.ts';
import type { HeldLocks } from './held-locks.ts';
import { INSTALLATION_CONFLICT } from './instance-claim.ts';
import type { ServiceAccounts } from './service-accounts.ts';
import type { ViewRole } from './view-role.ts';

export interface SagaMetrics {
  transition(from: Phase, to: Phase): void;
  transactionFinished(outcome: TerminalPhase, seconds: number): void;
  itemOperation(
    operation: 'prepare' | 'dryrun' | 'commit' | 'rollback',
    result: 'success' | 'conflict' | 'error',
  ): void;
  itemCount(n: number): void;
  /** A health check ended: what it checked, how, and how long it took. */
  healthCheck(
    check: 'Commit' | 'Rollback',
    result: 'Healthy' | 'Unhealthy' | 'TimedOut' | 'Regressed' | 'AnalysisFailed',
    seconds: number,
  ): void;
  /** A metric analysis check measured once, and what it found. */
  analysisMeasurement(result: 'Passed' | 'Failed' | 'NoData' | 'Error'): void;
  /** A Transaction written by another live installation of this instance. */
  installationConflict(): void;
}

export const noSagaMetrics: SagaMetrics = {
  transition: () => {},
  transactionFinished: () => {},
  itemOperation: () => {},
  itemCount: () => {},
  healthCheck: () => {},
  analysisMeasurement: () => {},
  installationConflict: () => {},
};

export interface SagaDeps {
  /** The controller's own identity. */
  client: KubeClient;
  objects: Objects;
  locks: LeaseLocks;
  /** The LockTable entries that make the API server refuse others' writes to held targets. */
  lockTables: LockTables;
  store: RollbackStore;
  events: EventSink;
  metrics: SagaMetrics;
  log: Logger;
  now: () => number;
  /** Where locks of cluster-scoped targets live; also this installation's name in a status it writes. */
  controllerNamespace: string;
  /** Whether an installation in this namespace holds a live claim on this instance (instance-claim.ts). */
  isLiveInstallation(namespace: string): boolean;
  /** What a Transaction's metric analysis may query and read (the platform team's settings). */
  analysis: AnalysisPolicy;
  /** Kinds besides Secret SOPS content may be applied to (--sops-kinds, src/changes/sops-kinds.ts). */
  sopsKinds: readonly string[];
  /** The cluster's live `view` ClusterRole: no SOPS content is applied to a kind it reads. */
  viewRole: ViewRole;
  serviceAccounts: ServiceAccounts;
  heldLocks: HeldLocks;
  /** What the health gate sees of the targets. */
  health: HealthReader;
  /** Metric measurements, run off the reconcile workers (stages/analysis.ts). */
  measurements: SlotRunner<Measurement>;
  /** Reconciles a Transaction (namespace/name) again soon: a measurement of it finished. */
  wake(key: string): void;
  /**
   * Git order: the name of an earlier transaction from the same repository, not yet finished,
   * that changes one of these targets (by targetKey); undefined when there is none.
   */
  queuedAhead(txn: Transaction, targetKeys: ReadonlySet<string>): Promise<string | undefined>;
  /** Told of every write of a Transaction, so the controller can recognise stale cache reads. */
  onWrite(txn: Transaction): void;
}

export interface Item extends ChangeItem {
  lock: LockKey;
  /** The target's key in the LockTable of `lock.namespace`; undefined for a kind not served. */
  tableKey: string | undefined;
}

export class SagaRun {
  txn: Transaction;
  readonly deps: SagaDeps;
  readonly items: Item[];
  /** Why a target could not be resolved (a kind the server does not serve), if one could not. */
  readonly unresolved: string | undefined;

  /**
   * The status as the API server last returned it: what a status write is a patch from, whatever
   * status the stage passes (a health check entered without a write, stages/outcomes.ts Entering).
   */
  #persisted: TransactionStatus;

  private constructor(deps: SagaDeps, txn: Transaction, items: Item[], unresolved: string | undefined) {
    this.deps = deps;
    this.txn = txn;
    this.#persisted = txn.status ?? {};
    this.items = items;
    this.unresolved = unresolved;
  }

  /**
   * Resolves every change's target through discovery. A kind the server does not serve is
   * recorded in `unresolved` (and assumed namespaced) rather than thrown, so the transaction can
   * fail with a message naming it.
   */
  static async start(deps: SagaDeps, txn: Transaction): Promise<SagaRun> {
    const namespace = txn.metadata.namespace ?? '';
    let unresolved: string | undefined;
    const items = await Promise.all(
      txn.spec.changes.map(async (change, index) => {
        let mapping: ResourceMapping | undefined;
        try {
          mapping = await deps.objects.discovery.mapping(change.target.apiVersion, change.target.kind);
        } catch (e) {
          if (!(e instanceof UnknownKindError)) throw e;
          unresolved ??= `change ${index}: ${e.message}`;
        }
        const target = resolveTarget(change.target, namespace, mapping?.namespaced ?? true);
        return {
          index,
          change,
          target,
          lock: { namespace: leaseNamespace(target, deps.controllerNamespace), name: leaseName(target) },
          tableKey:
            mapping && lockTableKey({ group: mapping.group, resource: mapping.resource, name: target.name }),
        };
      }),
    );
    return new SagaRun(deps, txn, items, unresolved);
  }

  get name(): string {
    return `${this.txn.metadata.namespace}/${this.txn.metadata.name}`;
  }

  get status(): TransactionStatus {
    return this.txn.status ?? {};
  }

  get phase(): Phase {
    return this.status.phase ?? 'Pending';
  }

  /**
   * Target reads and writes, as the transaction's ServiceAccount, carrying the Transaction's uid
   * (user extra tx.janus.io/transaction-uid): the lock policy lets the holder's own writes through
   * by it, and the audit log names the Transaction.
   */
  asServiceAccount(): Objects {
    return this.deps.objects.as(serviceAccountUser(this.txn), {
      [TRANSACTION_UID_EXTRA]: this.txn.metadata.uid ?? '',
    });
  }

  /** What the change operations (src/changes) work with: this Transaction, as its ServiceAccount. */
  changeContext(): ChangeContext {
    return { txn: this.txn, objects: this.asServiceAccount() };
  }

  /** Namespaces holding this transaction's lock Leases. */
  lockNamespaces(): Set<string> {
    return new Set(this.items.map((i) => i.lock.namespace));
  }

  async event(type: EventType, reason: string, message: string): Promise<void> {
    await this.deps.events.record(this.txn, type, reason, message);
  }

  /**
   * Persists a new status, moving to `phase` if given. Each logical transition on the way (e.g.
   * Preparing → Prepared → Committing in one write) is counted in metrics and recorded as one
   * Event carrying `detail`.
   */
  async writeStatus(
    status: TransactionStatus,
    phase?: {
      to: Phase;
      detail: PhaseDetail;
      eventType?: EventType;
      /** Conditions beyond the phase's own (the health gate's Healthy). */
      conditions?: readonly ConditionSpec[];
    },
  ): Promise<Transaction> {
    const from = this.phase;
    const now = new Date(this.deps.now());
    const generation = this.txn.metadata.generation;
    // Every status this installation writes says so: another of its instance then knows (instance-claim.ts).
    // A conflict's mark goes when this installation drives the Transaction (installation-conflict.ts).
    let next: TransactionStatus = {
      ...status,
      installation: this.deps.controllerNamespace,
      progress: progressOf(status, this.items.length),
      ...(status.conditions && {
        conditions: status.conditions.filter((c) => c.type !== INSTALLATION_CONFLICT),
      }),
    };
    let detail = phase?.detail;
    if (phase) next = withPhase(next, phase.to, phase.detail, now, generation, phase.conditions);
    let updated: Transaction;
    try {
      updated = await this.#patchStatus(fitStatus(next));
    } catch (e) {
      // Refused as such (a limit nobody thought of, an admission policy, an object too large):
      // the transition is made without the messages, so no deadline waits on a retry that
      // cannot succeed and the terminal path still releases the locks.
      const refusal = refusalOf(e);
      if (!refusal) throw e;
      const to = phase?.to ?? from;
      detail = refusedDetail(to, refusal);
      this.deps.log.warn(
        { transaction: this.name, to, fields: refusal.fields, err: e },
        'status write refused; writing it without messages',
      );
      next = withPhase(refusedStatus(next, this.#persisted), to, detail, now, generation);
      updated = await this.#patchStatus(fitStatus(next));
      await this.event('Warning', STATUS_WRITE_REFUSED, detail.message);
    }
    this.deps.log.debug({ transaction: this.name, phase: updated.status?.phase }, 'status written');
    if (phase && detail && phase.to !== from) {
      // The story of a transaction at info level: one line per phase it enters, with why and
      // from which Git commit.
      this.deps.log[phase.to === 'Failed' ? 'warn' : 'info'](
        {
          transaction: this.name,
          from,
          to: phase.to,
          reason: detail.reason,
          ...(next.source?.revision && { source: next.source.revision, path: next.source.path }),
        },
        `${this.name} ${from} → ${phase.to}: ${detail.message}`,
      );
      let previous = from;
      for (const to of transitionPath(from, phase.to)) {
        this.deps.metrics.transition(previous, to);
        previous = to;
      }
      if (isTerminal(phase.to) && next.startedAt) {
        const seconds = (now.getTime() - Date.parse(next.startedAt)) / 1000;
        this.deps.metrics.transactionFinished(phase.to, seconds);
      }
      const type =
        phase.eventType ?? (phase.to === 'Failed' || phase.to === 'RollingBack' ? 'Warning' : 'Normal');
      await this.event(type, phase.to, detail.message);
    }
    return updated;
  }

  async #patchStatus(next: TransactionStatus): Promise<Transaction> {
    const updated = await new Transactions(this.deps.client).patchStatus(
      nameOf(this.txn),
      { status: mergePatchOf(this.#persisted, next) },
      PatchType.merge,
    );
    this.txn = updated;
    this.#persisted = updated.status ?? {};
    this.deps.onWrite(updated);
    return updated;
  }

  /** A JSON patch on the Transaction's metadata (finalizer, one-shot annotations). */
  async patchMetadata(operations: unknown[]): Promise<Transaction> {
    this.txn = await new Transactions(this.deps.client).patch(nameOf(this.txn), operations, PatchType.json);
    this.#persisted = this.txn.status ?? {};
    this.deps.onWrite(this.txn);
    return this.txn;
  }
}

/**
 * A JSON merge patch (RFC 7386) turning `before` into `after`: removed fields become null, at
 * every depth, since a merge patch merges nested objects (a new `health` check must not keep the
 * previous one's `completedAt`). Lists are replaced whole, as merge patches do.
 */
export function mergePatchOf(before: object, after: object): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...after };
  const old = before as Record<string, unknown>;
  for (const key of Object.keys(old)) {
    if (!(key in after)) patch[key] = null;
    else if (isPlainObject(old[key]) && isPlainObject(patch[key])) {
      patch[key] = mergePatchOf(old[key] as object, patch[key] as object);
    }
  }
  return patch;
}

const isPlainObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v);

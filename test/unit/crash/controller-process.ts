/**
 * One `janus controller` process, in memory over the in-memory API (FakeApi): the real Reconciler
 * with real SagaDeps (Lease locks, rollback store, ServiceAccount check, Events, the measurement
 * runner), and what the process holds in memory (held locks and the transactions whose dry runs
 * passed, the ServiceAccount cache, discovery, the health gate's waiters, measurements in flight),
 * so that dropping it and starting another loses exactly what a SIGKILL loses.
 *
 * `killAfter` is JANUS_TEST_EXIT_AFTER_REQUESTS (src/kube/connection.ts): the process dies right
 * after its k-th API request took effect, before it sees the answer; every request it would make
 * after that is refused, so nothing it does once dead reaches the API.
 */
import type { AnalysisPolicy } from '../../../src/analysis/index.ts';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import { noSagaMetrics, type SagaDeps } from '../../../src/controller/context.ts';
import type { HealthReader, Observation } from '../../../src/controller/health-watch.ts';
import { HeldLocks } from '../../../src/controller/held-locks.ts';
import { measurementRunner } from '../../../src/controller/measurements.ts';
import { type ReconcileResult, Reconciler } from '../../../src/controller/reconciler.ts';
import { ServiceAccounts } from '../../../src/controller/service-accounts.ts';
import { ViewRole } from '../../../src/controller/view-role.ts';
import { EventRecorder } from '../../../src/kube/events.ts';
import { CORE_MAPPINGS, Discovery, Objects } from '../../../src/kube/resources.ts';
import { TRANSACTION_MAPPING } from '../../../src/kube/transactions.ts';
import { LeaseLocks } from '../../../src/locks/lease-locks.ts';
import { LockTables } from '../../../src/locks/lock-table.ts';
import { silentLogger } from '../../../src/log/index.ts';
import { RollbackStore } from '../../../src/rollback-store/store.ts';
import type { FakeApi, RequestGate } from '../../support/fake-api.ts';
import { relatedOf } from './simulated-cluster.ts';

/** Thrown at the request the process died after, and at every request it tries after. */
export class ControllerKilled extends Error {
  override readonly name = 'ControllerKilled';
}

/** Kinds the health gate reads from its watches (src/controller/health-watch.ts WATCHED_KINDS). */
const WATCHED = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'Job', 'Pod']);

const APPS = ['Deployment', 'StatefulSet', 'ReplicaSet', 'DaemonSet'].map((kind) => ({
  group: 'apps',
  version: 'v1',
  kind,
  resource: `${kind.toLowerCase()}s`,
  namespaced: true,
}));
const POD = { group: '', version: 'v1', kind: 'Pod', resource: 'pods', namespaced: true };

export interface ProcessOptions {
  killAfter?: number | undefined;
  /** The platform team's analysis settings (--analysis-allowed-addresses). */
  analysis?: AnalysisPolicy | undefined;
}

export class ControllerProcess {
  /** API requests made so far (`n method path`), as the debug log numbers them. */
  readonly requests: string[] = [];
  /** Transactions (namespace/name) woken since last asked: a watch event, a measurement done. */
  readonly woken = new Set<string>();
  #dead = false;
  readonly #deps: SagaDeps;
  readonly #reconciler: Reconciler;
  /** The health gate's waiters: a change in the cluster wakes them, as their watches would. */
  readonly #waiters = new Set<string>();

  constructor(api: FakeApi, clock: { now: number }, opts: ProcessOptions = {}) {
    const now = () => clock.now;
    const client = api.client(undefined, this.#gate(opts.killAfter));
    const discovery = new Discovery(client);
    for (const m of [...CORE_MAPPINGS, TRANSACTION_MAPPING, ...APPS, POD]) discovery.seed(m);
    const locks = new LeaseLocks(client, { now });
    const log = silentLogger();
    this.#deps = {
      client,
      objects: new Objects(client, discovery),
      locks,
      lockTables: new LockTables(client),
      store: new RollbackStore(client),
      events: new EventRecorder(client, { component: 'janus-controller', instance: 'in-memory' }),
      metrics: noSagaMetrics,
      log,
      now,
      controllerNamespace: 'janus-system',
      isLiveInstallation: () => false,
      analysis: opts.analysis ?? { allowedAddresses: [], templateNamespaces: ['janus-system'] },
      sopsKinds: [],
      viewRole: new ViewRole(client, now),
      serviceAccounts: new ServiceAccounts(client, now),
      heldLocks: new HeldLocks({ locks, now, log }),
      health: this.#healthReader(api),
      measurements: measurementRunner({}),
      wake: (key) => this.woken.add(key),
      queuedAhead: async () => undefined,
      onWrite: () => {},
    };
    this.#reconciler = new Reconciler(this.#deps);
  }

  get dead(): boolean {
    return this.#dead;
  }

  reconcile(txn: Transaction): Promise<ReconcileResult> {
    return this.#reconciler.reconcile(txn);
  }

  /** Something in the cluster changed: the gate's watches wake their waiters. */
  clusterChanged(): void {
    for (const w of this.#waiters) this.woken.add(w);
  }

  /** The process is gone: its lock renewals and measurements with it. */
  stop(): void {
    this.#dead = true;
    this.#deps.heldLocks.stop();
    this.#deps.measurements.stop();
  }

  #gate(killAfter: number | undefined): RequestGate {
    return async (req, serve) => {
      if (this.#dead) throw new ControllerKilled(`${req.method} ${req.path} by a killed controller`);
      let answer: unknown;
      let failure: { error: unknown } | undefined;
      try {
        answer = await serve();
      } catch (error) {
        failure = { error };
      }
      const dryRun =
        req.query?.dryRun === 'All' ||
        (req.body as { dryRun?: string[] } | undefined)?.dryRun?.includes('All');
      this.requests.push(
        `${this.requests.length + 1} ${req.method} ${req.path}${dryRun ? ' (dry run)' : ''}`,
      );
      if (this.requests.length === killAfter) {
        this.#dead = true;
        throw new ControllerKilled(`killed after request ${killAfter}`);
      }
      if (failure) throw failure.error;
      return answer;
    };
  }

  /**
   * The health gate's view: the watched kinds (and the pods and ReplicaSets their rules look
   * through) from the cluster as it is, as a synced watch has them, no request made; any other
   * kind read by GET as the ServiceAccount, looked at again every 5 s (health-watch.ts).
   */
  #healthReader(api: FakeApi): HealthReader {
    return {
      observe: (waiter, targets, asServiceAccount) => {
        this.#waiters.add(waiter);
        return Promise.all(
          targets.map(async (t): Promise<Observation> => {
            if (!WATCHED.has(t.kind))
              return { object: await asServiceAccount.find(t), related: {}, polled: true };
            const object = api.get(t);
            return { object, related: object ? relatedOf(api, object) : {}, polled: false };
          }),
        );
      },
      release: (waiter) => this.#waiters.delete(waiter),
    };
  }
}

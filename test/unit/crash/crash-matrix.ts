/**
 * The crash matrix over the in-memory API: a saga scenario run once uninterrupted, then once per
 * API request k, the controller process (controller-process.ts) killed right after its k-th
 * request and a new one started, each run compared with the uninterrupted one (end-state.ts).
 *
 * Time is a clock the test moves: a run jumps from one instant something happens to the next (a
 * requeue falls due, a pod of the simulated cluster changes, simulated-cluster.ts), so a bake
 * window or an analysis interval costs no wall time. Between two instants the work queue is
 * played as the controller plays it: a Transaction is reconciled when its requeue falls due, when
 * its own write comes back through the informer, when a watch of the gate sees its targets
 * change, and when a measurement finishes. A restarted process lists everything and reconciles
 * at once, RESTART_MS after the kill.
 */
import { expect, vi } from 'vitest';
import type { AnalysisPolicy } from '../../../src/analysis/index.ts';
import {
  API_VERSION,
  isTerminal,
  KIND,
  type LockTable,
  type Transaction,
} from '../../../src/api/v1alpha1/index.ts';
import type { KubeRequest } from '../../../src/kube/client.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { comparableItems, type EndState, expectEndsAsBaseline } from '../../support/crash/end-state.ts';
import { FakeApi } from '../../support/fake-api.ts';
import { ControllerKilled, ControllerProcess } from './controller-process.ts';
import { SimulatedCluster } from './simulated-cluster.ts';

export const NAMESPACE = 'shop';
const START = Date.parse('2026-03-01T12:00:00.000Z');
/** From a kill to the new process's first reconcile. */
const RESTART_MS = 1_000;
/** A run that has not settled after this many reconciles and cluster steps is stuck. */
const MAX_TURNS = 5_000;
/**
 * A scenario's whole matrix takes a second or two; a loaded 2-core machine may take ten times
 * that (the unit tier's default of 5 s is for one test, not a few thousand reconciles).
 */
export const MATRIX_TIMEOUT_MS = 120_000;

export interface InMemoryScenario {
  /** Creates the namespace's objects, as an admin would, before the Transaction. */
  setup(api: FakeApi): void;
  transaction(): Transaction;
  /** The observable state of every target, compared across runs. */
  observe(api: FakeApi): unknown;
  /** The platform team's analysis settings. */
  analysis?: AnalysisPolicy;
  /** What an address a metric analysis check queries answers (fetch is replaced during a run). */
  answer?(url: string): { status: number; body?: string };
  /** Admission: refuse a request, as a policy of the cluster would (throw a KubeApiError). */
  admit?(req: KubeRequest): void;
}

export interface InMemoryOutcome extends EndState {
  /** API requests the (last) process made until it had nothing left to do. */
  requests: string[];
  crashed: boolean;
  /** The Transaction as it ended. */
  txn: Transaction;
}

/** The scenario's saga, to its end: uninterrupted, or killed after its `killAfter`-th API request. */
export async function runSaga(scenario: InMemoryScenario, killAfter?: number): Promise<InMemoryOutcome> {
  const run = new InMemoryRun(scenario, killAfter);
  if (scenario.answer) vi.stubGlobal('fetch', fetchAnswering(scenario.answer));
  try {
    return await run.toTheEnd();
  } catch (e) {
    const which = killAfter === undefined ? 'uninterrupted' : `killed after request ${killAfter}`;
    throw new Error(`${which}: ${(e as Error).message}`, { cause: e });
  } finally {
    run.stop();
    vi.unstubAllGlobals();
  }
}

/** One run of a scenario: the API, the cluster, the clock, and the controller process of the moment. */
class InMemoryRun {
  readonly #scenario: InMemoryScenario;
  readonly #api = new FakeApi();
  readonly #clock = { now: START };
  readonly #cluster = new SimulatedCluster(this.#api, NAMESPACE);
  readonly #name: string;
  #controller: ControllerProcess;
  #crashed = false;
  /** When the Transaction is next reconciled (the work queue's delayed add), if it is. */
  #due: number | undefined;

  constructor(scenario: InMemoryScenario, killAfter: number | undefined) {
    this.#scenario = scenario;
    scenario.setup(this.#api);
    settleCluster(this.#cluster, this.#clock);
    if (scenario.admit) this.#api.before = (req) => scenario.admit?.(req);
    const txn = scenario.transaction();
    this.#name = txn.metadata.name;
    this.#api.put(txn);
    this.#controller = this.#start(killAfter);
    // The informer lists it: reconciled at once.
    this.#due = this.#clock.now;
  }

  async toTheEnd(): Promise<InMemoryOutcome> {
    for (let turn = 0; this.#moveOn(); turn++) {
      if (turn > MAX_TURNS)
        throw new Error(`${describe(this.#read())}: not settled after ${MAX_TURNS} turns`);
      await this.#reconcile();
    }
    const txn = this.#read();
    if (!settled(txn, this.#api)) throw new Error(`${describe(txn)}: stopped before the end`);
    settleCluster(this.#cluster, this.#clock);
    return {
      phase: txn.status?.phase,
      items: comparableItems(txn),
      targets: this.#scenario.observe(this.#api),
      requests: this.#controller.requests,
      crashed: this.#crashed,
      txn,
    };
  }

  stop(): void {
    this.#controller.stop();
  }

  #start(killAfter?: number): ControllerProcess {
    return new ControllerProcess(this.#api, this.#clock, { killAfter, analysis: this.#scenario.analysis });
  }

  #read(): Transaction {
    const ref = { apiVersion: API_VERSION, kind: KIND, name: this.#name, namespace: NAMESPACE };
    return this.#api.get<Transaction>(ref) as Transaction;
  }

  /**
   * Moves the clock to the next reconcile, through the cluster's changes on the way (each one
   * waking the gate's waiters); false when nothing is left to happen.
   */
  #moveOn(): boolean {
    for (let step = 0; step < MAX_TURNS; step++) {
      const now = this.#clock.now;
      if (this.#cluster.sync(now)) this.#controller.clusterChanged();
      if (this.#controller.woken.delete(`${NAMESPACE}/${this.#name}`))
        this.#due = Math.min(this.#due ?? now, now);
      const podChange = this.#cluster.nextChangeAt(now);
      if (this.#due === undefined && (podChange === undefined || settled(this.#read(), this.#api)))
        return false;
      if (this.#due !== undefined && (podChange === undefined || this.#due <= podChange)) {
        this.#clock.now = Math.max(now, this.#due);
        this.#due = undefined;
        return true;
      }
      this.#clock.now = podChange as number;
    }
    throw new Error('the cluster never stops changing');
  }

  /** One reconcile, as a worker of the queue runs it; a process killed in it is replaced. */
  async #reconcile(): Promise<void> {
    const before = this.#read();
    let result: { requeueAfterMs?: number } = {};
    try {
      result = await this.#controller.reconcile(before);
    } catch (e) {
      if (!(e instanceof ControllerKilled)) throw e;
    }
    if (this.#scenario.answer) await measurementsSettled();
    if (this.#controller.dead) {
      this.#controller.stop();
      this.#crashed = true;
      this.#clock.now += RESTART_MS;
      this.#controller = this.#start();
      this.#due = this.#clock.now;
      return;
    }
    if (result.requeueAfterMs !== undefined) this.#due = this.#clock.now + result.requeueAfterMs;
    // Its own write comes back through the informer, and is reconciled again.
    if (this.#read().metadata.resourceVersion !== before.metadata.resourceVersion)
      this.#due = this.#clock.now;
  }
}

/**
 * The scenario run uninterrupted (the baseline), then killed after each of its API requests from
 * `first` to the baseline's last.
 */
export async function killedAfterEveryRequest(
  scenario: InMemoryScenario,
  first = 1,
): Promise<{ baseline: InMemoryOutcome; outcomes: Array<InMemoryOutcome & { k: number }> }> {
  const baseline = await runSaga(scenario);
  const outcomes: Array<InMemoryOutcome & { k: number }> = [];
  for (let k = first; k <= baseline.requests.length; k++)
    outcomes.push({ ...(await runSaga(scenario, k)), k });
  return { baseline, outcomes };
}

/**
 * The scenario's saga killed after each of its requests, every run ending where the
 * uninterrupted one did; the uninterrupted one is returned, for what the test expects of it.
 */
export async function expectEveryKillEndsAsBaseline(
  scenario: InMemoryScenario,
  checkBaseline: (baseline: InMemoryOutcome) => void,
): Promise<void> {
  const { baseline, outcomes } = await killedAfterEveryRequest(scenario);
  checkBaseline(baseline);
  // Every k really killed the controller: none is past the saga's last request.
  expect(outcomes.filter((o) => o.crashed).map((o) => o.k)).toEqual(baseline.requests.map((_, i) => i + 1));
  expectEndsAsBaseline(outcomes, baseline);
}

/** Finished: a terminal phase, the finalizer gone, no Lease and no LockTable entry left. */
function settled(txn: Transaction, api: FakeApi): boolean {
  return (
    isTerminal(txn.status?.phase ?? 'Pending') &&
    (txn.metadata.finalizers ?? []).length === 0 &&
    api.list('Lease').length === 0 &&
    api.list<LockTable & KubeObject>('LockTable').every((t) => Object.keys(t.spec?.locks ?? {}).length === 0)
  );
}

function describe(txn: Transaction): string {
  const ready = txn.status?.conditions?.find((c) => c.type === 'Ready');
  return `phase ${txn.status?.phase} (Ready: ${ready?.reason}: ${ready?.message}; finalizers: ${txn.metadata.finalizers})`;
}

/** The cluster's workloads and pods, caught up until nothing changes by itself any more. */
function settleCluster(cluster: SimulatedCluster, clock: { now: number }): void {
  for (let step = 0; step < 1_000; step++) {
    cluster.sync(clock.now);
    const next = cluster.nextChangeAt(clock.now);
    if (next === undefined) return;
    clock.now = next;
  }
  throw new Error('the simulated cluster never settles');
}

/** Measurements run beside the reconcile (their answers are at hand): let them finish. */
async function measurementsSettled(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** A fetch that answers as `answer` says, with no socket. */
function fetchAnswering(answer: NonNullable<InMemoryScenario['answer']>): typeof fetch {
  return async (input) => {
    const { status, body } = answer(String(input));
    return new Response(body ?? '', { status });
  };
}

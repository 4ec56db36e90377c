/**
 * Crash-safety harness: runs a saga scenario once uninterrupted, then once per API request k,
 * killing the controller (SIGKILL, from inside, right after its k-th request) and restarting it,
 * and compares every outcome with the uninterrupted one.
 */

import { LABEL_INSTANCE, type Phase, type Transaction } from '../../../src/api/v1alpha1/index.ts';
import type { Objects } from '../../../src/kube/resources.ts';
import { getTxn, leasesOf, txnRef } from '../cluster/saga.ts';
import { eventually } from '../eventually.ts';
import { startController } from '../processes/controller-process.ts';
import { comparableItems, type EndState } from './end-state.ts';

export { expectEndsAsBaseline } from './end-state.ts';

export interface Scenario {
  /** Creates the namespace's fixtures (ServiceAccount, targets). */
  setup(namespace: string): Promise<void>;
  transaction(namespace: string): Transaction;
  phase: Phase;
  /** The observable state of every target, compared across runs. */
  observe(namespace: string): Promise<unknown>;
  /** Flags for every controller the scenario starts (after --no-leader-elect). */
  controllerArgs?: string[];
  /**
   * An installation of its own (tx.janus.io/instance on the Transaction, JANUS_INSTANCE for its
   * controllers): no other controller of the shared test cluster acts on it with other settings.
   */
  instance?: string;
}

export interface Outcome extends EndState {
  /** API requests the controller made (watches excepted) until it had nothing left to do. */
  requests: number;
  crashed: boolean;
  /** The last controller's log (debug level: one line per API request). */
  log: string;
}

async function settled(admin: Objects, namespace: string, name: string, phase: Phase): Promise<Transaction> {
  return eventually(
    async () => {
      const txn = await getTxn(admin, namespace, name);
      if (txn.status?.phase !== phase) {
        const ready = txn.status?.conditions?.find((c) => c.type === 'Ready');
        throw new Error(
          `phase ${txn.status?.phase}, want ${phase} (Ready: ${ready?.reason}: ${ready?.message}; health: ${JSON.stringify(txn.status?.health)})`,
        );
      }
      if ((txn.metadata.finalizers ?? []).length > 0) throw new Error('finalizer still present');
      if ((await leasesOf(admin, namespace)).length > 0) throw new Error('leases still present');
      return txn;
    },
    { timeoutMs: 120_000, intervalMs: 100 },
  );
}

export async function run(
  admin: Objects,
  kubeconfig: string,
  scenario: Scenario,
  namespace: string,
  crashAfter?: number,
): Promise<Outcome> {
  await scenario.setup(namespace);
  const made = scenario.transaction(namespace);
  const { instance } = scenario;
  const txn = instance
    ? {
        ...made,
        metadata: { ...made.metadata, labels: { ...made.metadata.labels, [LABEL_INSTANCE]: instance } },
      }
    : made;
  const extraArgs = ['--no-leader-elect', ...(scenario.controllerArgs ?? [])];
  const installation = instance ? { JANUS_INSTANCE: instance } : {};
  let controller = await startController({
    kubeconfig,
    namespace,
    extraArgs,
    env: {
      ...installation,
      ...(crashAfter !== undefined && { JANUS_TEST_EXIT_AFTER_REQUESTS: String(crashAfter) }),
    },
  });
  await admin.create(txn);
  let crashed = false;
  if (crashAfter !== undefined) {
    // Either the switch fires, or the saga needed fewer requests and finishes.
    const exit = await Promise.race([
      controller.exited,
      settled(admin, namespace, txn.metadata.name, scenario.phase).then(() => 'done' as const),
    ]);
    // The saga can look finished just before the switch fires on its last request.
    const died =
      exit === 'done'
        ? await Promise.race([controller.exited, new Promise((r) => setTimeout(() => r('alive'), 2_000))])
        : exit;
    if (died === 'SIGKILL') {
      crashed = true;
      controller = await startController({ kubeconfig, namespace, extraArgs, env: installation });
    }
  }
  const final = await settled(admin, namespace, txn.metadata.name, scenario.phase);
  await controller.stop();
  const log = await controller.logs();
  const requests = Math.max(0, ...[...log.matchAll(/"n":(\d+),"method"/g)].map((m) => Number(m[1])));
  return {
    phase: final.status?.phase,
    items: comparableItems(final),
    targets: await scenario.observe(namespace),
    requests,
    crashed,
    log,
  };
}

export { txnRef };

/**
 * Runs `scenario` once uninterrupted (the baseline), then once per API request k from
 * `firstRequest(baseline)` (which may also check the baseline) to the baseline's last, killed
 * after its k-th request; each run in a fresh namespace from `freshNamespace`, deleted afterwards.
 */
export async function killedAfterEveryRequest(
  admin: Objects,
  kubeconfig: string,
  scenario: Scenario,
  freshNamespace: (label: string) => Promise<string>,
  firstRequest: (baseline: Outcome) => number,
): Promise<{ baseline: Outcome; outcomes: Array<Outcome & { k: number }> }> {
  const baseline = await run(admin, kubeconfig, scenario, await freshNamespace('base'));
  const outcomes: Array<Outcome & { k: number }> = [];
  for (let k = firstRequest(baseline); k <= baseline.requests; k++) {
    const namespace = await freshNamespace(String(k));
    outcomes.push({ ...(await run(admin, kubeconfig, scenario, namespace, k)), k });
    await admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace });
  }
  return { baseline, outcomes };
}

/**
 * The number of the API request after which the status first showed `phase`, from a controller
 * log at debug level: with JANUS_TEST_EXIT_AFTER_REQUESTS set to it, the controller dies right
 * after entering that phase, which lets a test act "between two steps" and then restart it.
 */
export function requestNumberAt(log: string, phase: Phase): number {
  let last = 0;
  for (const line of log.split('\n')) {
    const request = /"n":(\d+),"method"/.exec(line);
    if (request) last = Number(request[1]);
    else if (line.includes('"msg":"status written"') && line.includes(`"phase":"${phase}"`)) return last;
  }
  throw new Error(`the log never shows phase ${phase}`);
}

/** The number of the first API request, after the status showed `phase`, whose path ends with `pathSuffix`. */
export function requestNumberOf(log: string, phase: Phase, pathSuffix: string): number {
  let inPhase = false;
  for (const line of log.split('\n')) {
    if (line.includes('"msg":"status written"') && line.includes(`"phase":"${phase}"`)) inPhase = true;
    const request = /"n":(\d+),"method":"[A-Z]+","path":"([^"]+)"/.exec(line);
    if (inPhase && request?.[2]?.endsWith(pathSuffix)) return Number(request[1]);
  }
  throw new Error(`no request to …${pathSuffix} after phase ${phase}`);
}

/**
 * Crash-safety harness of the real controller process: runs a saga scenario once uninterrupted,
 * then once per chosen API request k (request-log.ts), killing the controller (SIGKILL, from
 * inside, right after its k-th request) and restarting it, and compares every outcome with the
 * uninterrupted one (end-state.ts). Killing at every request is the in-memory matrix's
 * (test/unit/crash/): here, the points where the real process, API server and cluster matter.
 */

import { expect } from 'vitest';
import type { Phase, Transaction } from '../../../src/api/v1alpha1/index.ts';
import type { Objects } from '../../../src/kube/resources.ts';
import { getTxn, leasesOf, lockEntries, txnRef } from '../cluster/saga.ts';
import { eventually } from '../eventually.ts';
import { startController } from '../processes/controller-process.ts';
import { comparableItems, type EndState } from './end-state.ts';
import type { KillPoint } from './request-log.ts';

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
      // Every object opens again: no LockTable entry is left, whichever request the crash followed.
      if (Object.keys(await lockEntries(admin, namespace)).length > 0)
        throw new Error('lock entries still present');
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
  // The namespace's installation (test/support/cluster/instance.ts): the Transaction carries its label.
  const txn = scenario.transaction(namespace);
  const extraArgs = ['--no-leader-elect', ...(scenario.controllerArgs ?? [])];
  let controller = await startController({
    kubeconfig,
    namespace,
    extraArgs,
    ...(crashAfter !== undefined && { env: { JANUS_TEST_EXIT_AFTER_REQUESTS: String(crashAfter) } }),
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
      controller = await startController({ kubeconfig, namespace, extraArgs });
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
 * Runs `scenario` once uninterrupted (the baseline), then once per kill point `choose` picks from
 * it (it may also check the baseline), the controller killed right after that request and
 * restarted; each run in a fresh namespace from `freshNamespace`, deleted afterwards. The points
 * go to stderr as `crash/<label>: …`, for the coverage table (docs/design.md).
 */
export async function killedAtPoints(
  admin: Objects,
  kubeconfig: string,
  scenario: Scenario,
  freshNamespace: (label: string) => Promise<string>,
  label: string,
  choose: (baseline: Outcome) => KillPoint[],
): Promise<{ baseline: Outcome; outcomes: Array<Outcome & KillPoint> }> {
  const baseline = await run(admin, kubeconfig, scenario, await freshNamespace('base'));
  const points = choose(baseline);
  const outcomes: Array<Outcome & KillPoint> = [];
  for (const point of points) {
    const namespace = await freshNamespace(String(point.k));
    outcomes.push({ ...(await run(admin, kubeconfig, scenario, namespace, point.k)), ...point });
    await admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: namespace });
  }
  const crashed = outcomes.filter((o) => o.crashed).length;
  process.stderr.write(
    `crash/${label}: killed after ${points.map((p) => `${p.k} (${p.name})`).join(', ')} of ${baseline.requests} requests; ${crashed} of ${points.length} runs crashed\n`,
  );
  return { baseline, outcomes };
}

/** Every run was really killed at its point: none of them is past the saga's last request. */
export function expectAllCrashed(outcomes: ReadonlyArray<Outcome & KillPoint>): void {
  expect(outcomes.filter((o) => !o.crashed).map((o) => `${o.k} (${o.name})`)).toEqual([]);
}

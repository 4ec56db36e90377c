/**
 * The health gate's crash scenarios (crash/health-gate.test.ts, bake-window.test.ts,
 * analysis-window.test.ts): a ConfigMap and a Deployment rolled out through the gate, killed at
 * chosen requests from the commit point on, each run ending where the uninterrupted one did.
 */
import { expect } from 'vitest';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import type { Objects } from '../../../src/kube/resources.ts';
import { POD_IMAGES } from '../cluster/pod-images.ts';
import { configMap, serviceAccount, testNamespace, transaction } from '../cluster/saga.ts';
import { availableWith, deployment, deploymentState } from '../cluster/workloads.ts';
import { eventually } from '../eventually.ts';
import { expectEndsAsBaseline, killedAtPoints, type Scenario } from './crash.ts';
import { ROLLOUT_DEPLOYER, rolloutChanges } from './crash-scenarios.ts';
import { killPoints, type PointSpec, requestNumberAt } from './request-log.ts';

interface Clients {
  admin: Objects;
  kubeconfigs: { controller: string };
}

/** A ConfigMap and a Deployment rolled out to `image`: Committed if it becomes healthy, else RolledBack. */
export function rollout(
  clients: Clients,
  image: string,
  phase: 'Committed' | 'RolledBack',
  health: Transaction['spec']['health'] = { timeout: '2m' },
): Scenario {
  return {
    phase,
    async setup(namespace) {
      await serviceAccount(clients.admin, namespace, 'deployer', ROLLOUT_DEPLOYER);
      await clients.admin.create(configMap(namespace, 'app-config', { release: 'v1' }));
      await clients.admin.create(deployment(namespace, 'web', POD_IMAGES.ready));
      await availableWith(clients.admin, namespace, 'web', POD_IMAGES.ready);
    },
    transaction(namespace) {
      return transaction(namespace, 'gated', rolloutChanges(image), { health });
    },
    async observe(namespace) {
      // The end state once the Deployment controller has caught up: what runs, and how much.
      const state = await eventually(
        async () => {
          const s = await deploymentState(clients.admin, namespace, 'web');
          expect(s).toMatchObject({ available: 2, updated: 2, replicas: 2 });
          return s;
        },
        { timeoutMs: 60_000 },
      );
      const cm = await clients.admin.get({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'app-config',
        namespace,
      });
      return { deployment: state, config: cm.data };
    },
  };
}

/** The last status write before the gate's verdict: inside the bake window, once it has opened. */
export const INSIDE_THE_WINDOW: PointSpec = {
  name: 'inside the window',
  phase: 'Verifying',
  method: 'PATCH',
  path: '/transactions/gated/status',
  nth: -2,
};

/**
 * The rollout killed at the stage boundaries from the commit point on and after the requests of
 * `specs`, each run ending where the uninterrupted one did (`expected`). The saga before the
 * commit point is the committing one's (commit.test.ts), and every request of it is killed in
 * memory (test/unit/crash/health-gate.test.ts).
 */
export async function killedAtGatePoints(
  clients: Clients,
  label: string,
  scenario: Scenario,
  expected: unknown,
  specs: readonly PointSpec[],
) {
  const fresh = (k: string) => testNamespace(clients.admin, `crash-gate-${label}-${k}`);
  let verifying = 0;
  const { baseline, outcomes } = await killedAtPoints(
    clients.admin,
    clients.kubeconfigs.controller,
    scenario,
    fresh,
    `health-gate ${label}`,
    (baseline) => {
      expect(baseline.phase).toBe(scenario.phase);
      expect(baseline.targets).toEqual(expected);
      const committing = requestNumberAt(baseline.log, 'Committing');
      verifying = gateEntered(baseline.log);
      return killPoints(baseline.log, specs).filter((p) => p.k > committing);
    },
  );
  // How many requests the gate makes depends on how the rollout's events fall, so a point late
  // in the check may be past the end of another run; up to the check, every point is reached.
  const missed = outcomes.filter((o) => !o.crashed);
  expect(missed.filter((o) => o.k <= verifying).map((o) => o.name)).toEqual([]);
  expect(missed.length).toBeLessThanOrEqual(2);
  expectEndsAsBaseline(outcomes, baseline);
}

/**
 * The request after which the gate's check began: the Verifying status, or, when the first look
 * decided at once (a pod already crash-looping), the outcome's status, written instead of it.
 */
function gateEntered(log: string): number {
  for (const phase of ['Verifying', 'RollingBack', 'Committed'] as const) {
    try {
      return requestNumberAt(log, phase);
    } catch {
      // not this phase: the next
    }
  }
  throw new Error('the log never shows the health gate entered (Verifying, RollingBack or Committed)');
}

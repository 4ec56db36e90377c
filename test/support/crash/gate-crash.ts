/**
 * The health gate's crash scenarios (crash/health-gate.test.ts, crash/bake-window.test.ts): a
 * ConfigMap and a Deployment rolled out through the gate, killed after every API request from a
 * chosen point on, each run ending where the uninterrupted one did.
 */
import { expect } from 'vitest';
import type { Phase, Transaction } from '../../../src/api/v1alpha1/index.ts';
import type { Objects } from '../../../src/kube/resources.ts';
import { POD_IMAGES } from '../cluster/pod-images.ts';
import { configMap, serviceAccount, testNamespace, transaction } from '../cluster/saga.ts';
import { availableWith, deployment, deploymentState } from '../cluster/workloads.ts';
import { eventually } from '../eventually.ts';
import { expectEndsAsBaseline, killedAfterEveryRequest, requestNumberAt, type Scenario } from './crash.ts';
import { ROLLOUT_DEPLOYER, rolloutChanges } from './crash-scenarios.ts';

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

export async function killedAtEveryGateRequest(
  clients: Clients,
  label: string,
  scenario: Scenario,
  expected: unknown,
  /** The phase whose status write the kills start after (default: from the commit point on). */
  from: Phase = 'Committing',
) {
  const fresh = (k: string) => testNamespace(clients.admin, `crash-gate-${label}-${k}`);
  let first = 0;
  const { baseline, outcomes } = await killedAfterEveryRequest(
    clients.admin,
    clients.kubeconfigs.controller,
    scenario,
    fresh,
    (baseline) => {
      expect(baseline.phase).toBe(scenario.phase);
      expect(baseline.targets).toEqual(expected);
      // From the first request after the commit point: the commits, the gate's first look (its
      // watches' LISTs come before the write that enters Verifying), and everything after.
      first = requestNumberAt(baseline.log, from) + 1;
      if (from === 'Committing') expect(requestNumberAt(baseline.log, 'Verifying')).toBeGreaterThan(first);
      expect(baseline.requests).toBeGreaterThan(first);
      return first;
    },
  );
  // How many requests the gate makes depends on how the rollout's events fall, so the last few
  // may not be reached in every run; all the others must have really killed the controller.
  const crashed = outcomes.filter((o) => o.crashed).length;
  process.stderr.write(
    `crash/health-gate ${label}: killed after requests ${first}..${baseline.requests} of ${baseline.requests} (${crashed} of ${outcomes.length} runs crashed)\n`,
  );
  expect(outcomes.length).toBeGreaterThanOrEqual(3);
  expect(crashed).toBeGreaterThanOrEqual(Math.max(1, outcomes.length - 3));
  expectEndsAsBaseline(outcomes, baseline);
}

/**
 * The health gate is as crash-safe as the rest of the saga: a controller killed after any API
 * request it makes from the commit point on (the commits, the watches' LISTs, the status writes,
 * the rollback and its own check) resumes to the end an uninterrupted run reaches. Earlier
 * requests (prepare) are killed at every step by commit.test.ts and rollback.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { Change, Transaction } from '../../../src/api/v1alpha1/index.ts';
import {
  expectEndsAsBaseline,
  killedAfterEveryRequest,
  requestNumberAt,
  type Scenario,
} from '../../support/crash.ts';
import { eventually } from '../../support/eventually.ts';
import { useClients } from '../../support/kube.ts';
import { POD_IMAGES } from '../../support/pod-images.ts';
import { cmTarget, configMap, serviceAccount, testNamespace, transaction } from '../../support/saga.ts';
import { availableWith, deployment, deploymentState } from '../../support/workloads.ts';

const clients = useClients();

const DEPLOYER = [
  { apiGroups: [''], resources: ['configmaps'], verbs: ['*'] },
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] },
];

/** A ConfigMap and a Deployment rolled out to `image`: Committed if it becomes healthy, else RolledBack. */
function rollout(
  image: string,
  phase: 'Committed' | 'RolledBack',
  health: Transaction['spec']['health'] = { timeout: '2m' },
): Scenario {
  return {
    phase,
    async setup(namespace) {
      await serviceAccount(clients.admin, namespace, 'deployer', DEPLOYER);
      await clients.admin.create(configMap(namespace, 'app-config', { release: 'v1' }));
      await clients.admin.create(deployment(namespace, 'web', POD_IMAGES.ready));
      await availableWith(clients.admin, namespace, 'web', POD_IMAGES.ready);
    },
    transaction(namespace) {
      const changes: Change[] = [
        { target: cmTarget('app-config'), type: 'Patch', content: { data: { release: 'v2' } } },
        {
          target: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
          type: 'Patch',
          content: { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } },
        },
      ];
      return transaction(namespace, 'gated', changes, { health });
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

async function killedAtEveryGateRequest(label: string, scenario: Scenario, expected: unknown) {
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
      first = requestNumberAt(baseline.log, 'Committing') + 1;
      expect(requestNumberAt(baseline.log, 'Verifying')).toBeGreaterThan(first);
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

describe('a health gate killed after every API request', () => {
  it('that ends healthy: Committed, the new version running', { timeout: 1_200_000 }, async () => {
    await killedAtEveryGateRequest('ok', rollout(POD_IMAGES.readyAlternative, 'Committed'), {
      deployment: { image: POD_IMAGES.readyAlternative, available: 2, updated: 2, replicas: 2 },
      config: { release: 'v2' },
    });
  });

  it('that ends unhealthy: RolledBack, the old version running', { timeout: 1_200_000 }, async () => {
    await killedAtEveryGateRequest('bad', rollout(POD_IMAGES.crashLoop, 'RolledBack'), {
      deployment: { image: POD_IMAGES.ready, available: 2, updated: 2, replicas: 2 },
      config: { release: 'v1' },
    });
  });

  // The bake window (health.stableFor) lives in the status alone: a controller killed anywhere
  // in it, before or after the write that opens it, resumes counting from status.health.stableSince.
  it(
    'with a bake window, a rollout that crash-loops inside it: RolledBack, the old version running',
    { timeout: 1_800_000 },
    () => killedWhileBaking('bake', POD_IMAGES.flapping, '1m', 'RolledBack', POD_IMAGES.ready, 'v1'),
  );

  it(
    'with a bake window, a healthy rollout: Committed once the window has passed',
    { timeout: 1_800_000 },
    () =>
      killedWhileBaking(
        'baked',
        POD_IMAGES.readyAlternative,
        '10s',
        'Committed',
        POD_IMAGES.readyAlternative,
        'v2',
      ),
  );
});

function killedWhileBaking(
  label: string,
  image: string,
  stableFor: string,
  phase: 'Committed' | 'RolledBack',
  running: string,
  release: string,
) {
  return killedAtEveryGateRequest(label, rollout(image, phase, { timeout: '2m', stableFor }), {
    deployment: { image: running, available: 2, updated: 2, replicas: 2 },
    config: { release },
  });
}

/**
 * The health gate's cost and speed on the test control plane's kwok nodes: the API requests it
 * adds to a rollout (one transaction patching a 2-replica Deployment, with and without the gate),
 * how long a healthy rollout takes to be Committed, and how long from the moment a new pod is
 * seen in CrashLoopBackOff to the transaction being RolledBack (the old version healthy again).
 */
import type { Change } from '../../src/api/v1alpha1/index.ts';
import { POD_IMAGES } from '../support/cluster/pod-images.ts';
import { getTxn, leasesOf, testNamespace, transaction } from '../support/cluster/saga.ts';
import { deployment, deploymentState } from '../support/cluster/workloads.ts';
import { type Bench, timeUntil } from './harness.ts';
import { type Figure, figure } from './stats.ts';

const DEPLOYER = [
  { apiGroups: [''], resources: ['configmaps'], verbs: ['*'] },
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] },
];

async function shop(b: Bench, label: string): Promise<string> {
  const ns = await testNamespace(b.admin, `bench-gate-${label}`, { deployer: DEPLOYER });
  await b.admin.create(deployment(ns, 'web', POD_IMAGES.ready));
  await timeUntil(async () => (await deploymentState(b.admin, ns, 'web')).available === 2, 120_000, 50);
  return ns;
}

const rollout = (image: string): Change => ({
  target: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
  type: 'Patch',
  content: { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } },
});

async function settled(b: Bench, ns: string, phase: string): Promise<void> {
  await timeUntil(
    async () => {
      const txn = await getTxn(b.admin, ns, 'gated');
      return (
        txn.status?.phase === phase &&
        !txn.metadata.finalizers?.length &&
        (await leasesOf(b.admin, ns)).length === 0
      );
    },
    600_000,
    20,
  );
}

/** One healthy rollout: controller requests (watches apart), watches opened, seconds to healthy. */
async function healthyRollout(b: Bench, gated: boolean) {
  const ns = await shop(b, gated ? 'on' : 'off');
  const controller = await b.controller(ns);
  b.proxy.reset();
  await b.admin.create(
    transaction(ns, 'gated', [rollout(POD_IMAGES.readyAlternative)], {
      health: gated ? { timeout: '5m' } : { targets: 'None' },
    }),
  );
  await settled(b, ns, 'Committed');
  await new Promise((r) => setTimeout(r, 500));
  const requests = b.proxy.requests.filter((r) => !r.watch).length;
  const watches = b.proxy.requests.filter((r) => r.watch).length;
  const health = (await getTxn(b.admin, ns, 'gated')).status?.health;
  await controller.stop();
  const seconds =
    health?.startedAt && health.completedAt
      ? (Date.parse(health.completedAt) - Date.parse(health.startedAt)) / 1000
      : 0;
  return { requests, watches, seconds };
}

/** Milliseconds from the first new pod seen in CrashLoopBackOff to RollingBack, and to RolledBack. */
async function unhealthyToRolledBack(b: Bench) {
  const ns = await shop(b, 'crash');
  const controller = await b.controller(ns);
  await b.admin.create(
    transaction(ns, 'gated', [rollout(POD_IMAGES.crashLoop)], { health: { timeout: '5m' } }),
  );
  await timeUntil(
    async () => {
      const pods = await b.admin.list('v1', 'Pod', ns, { labelSelector: 'app=web' });
      return pods.items.some((p) =>
        (
          (p as { status?: { containerStatuses?: { state?: { waiting?: { reason?: string } } }[] } }).status
            ?.containerStatuses ?? []
        ).some((s) => s.state?.waiting?.reason === 'CrashLoopBackOff'),
      );
    },
    120_000,
    10,
  );
  const seen = performance.now();
  await timeUntil(
    async () => (await getTxn(b.admin, ns, 'gated')).status?.phase !== 'Verifying',
    120_000,
    10,
  );
  const detected = performance.now() - seen;
  await settled(b, ns, 'RolledBack');
  const rolledBack = performance.now() - seen;
  await controller.stop();
  return { detected, rolledBack };
}

export async function healthGate(b: Bench, runs: number): Promise<Record<string, Figure>> {
  const on: Awaited<ReturnType<typeof healthyRollout>>[] = [];
  const off: Awaited<ReturnType<typeof healthyRollout>>[] = [];
  const bad: Awaited<ReturnType<typeof unhealthyToRolledBack>>[] = [];
  for (let r = 0; r < runs; r++) {
    on.push(await healthyRollout(b, true));
    off.push(await healthyRollout(b, false));
    bad.push(await unhealthyToRolledBack(b));
  }
  return {
    'API requests of a 2-replica Deployment rollout, gate on (watches apart)': figure(
      on.map((x) => x.requests),
      'requests',
    ),
    'API requests of the same rollout, gate off (health.targets: None)': figure(
      off.map((x) => x.requests),
      'requests',
    ),
    'watches the gate opens for one Deployment (its namespace’s Deployments, ReplicaSets, pods)': figure(
      on.map((x) => x.watches - (off[0]?.watches ?? 0)),
      'watches',
    ),
    'commit to healthy, 2-replica rollout on kwok nodes (status.health)': figure(
      on.map((x) => x.seconds * 1000),
      'ms',
    ),
    'new pod seen in CrashLoopBackOff → rollback started': figure(
      bad.map((x) => x.detected),
      'ms',
    ),
    'new pod seen in CrashLoopBackOff → RolledBack (old version healthy again)': figure(
      bad.map((x) => x.rolledBack),
      'ms',
    ),
  };
}

/**
 * The health gate on a control plane that runs workloads (kwok nodes, real scheduler and
 * Deployment controller): a rollout that becomes healthy ends Committed; one that cannot, or that
 * runs out of time, rolls back, and the Deployment returns to its previous ReplicaSet with its
 * pods Ready.
 */
import { describe, expect, it } from 'vitest';
import type { Change, Transaction } from '../../../src/api/v1alpha1/index.ts';
import type { Objects } from '../../../src/kube/resources.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import {
  annotate,
  cmTarget,
  configMap,
  data,
  testNamespace,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { availableWith, deployment } from '../../support/cluster/workloads.ts';
import { eventually } from '../../support/eventually.ts';
import { withController } from '../../support/processes/controller-process.ts';

const clients = useClients();

const DEPLOYER = [
  { apiGroups: [''], resources: ['configmaps', 'services'], verbs: ['*'] },
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] },
];
const deploymentTarget = (name: string) => ({ apiVersion: 'apps/v1', kind: 'Deployment', name });

/** A Patch of the Deployment's image (server-side apply merges containers by name). */
const newImage = (name: string, image: string): Change => ({
  target: deploymentTarget(name),
  type: 'Patch',
  content: { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } },
});

const configPatch = (value: string): Change => ({
  target: cmTarget('app-config'),
  type: 'Patch',
  content: { data: { release: value } },
});

/** Pods of the Deployment, with their pod-template-hash and readiness. */
async function podsOf(admin: Objects, ns: string, app: string) {
  const pods = await admin.list('v1', 'Pod', ns, { labelSelector: `app=${app}` });
  return pods.items
    .filter((p) => !p.metadata.deletionTimestamp)
    .map((p) => ({
      hash: p.metadata.labels?.['pod-template-hash'],
      ready: (
        (p as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions ?? []
      ).some((c) => c.type === 'Ready' && c.status === 'True'),
    }));
}

/** A shop with app-config and a Deployment "web" running the good image, both available. */
async function shop(prefix: string, extra: Record<string, unknown> = {}) {
  const ns = await testNamespace(clients.admin, prefix, { deployer: DEPLOYER });
  await clients.admin.create(configMap(ns, 'app-config', { release: 'v1' }));
  await clients.admin.create(deployment(ns, 'web', POD_IMAGES.ready, extra));
  await availableWith(clients.admin, ns, 'web', POD_IMAGES.ready);
  const before = await podsOf(clients.admin, ns, 'web');
  expect(before).toHaveLength(2);
  return { ns, hash: before[0]?.hash };
}

function controller<T>(ns: string, body: () => Promise<T>): Promise<T> {
  return withController(
    { kubeconfig: clients.kubeconfigs.controller, namespace: ns, logLevel: 'info' },
    body,
  );
}

describe('the health gate on Services (no pods needed)', () => {
  const service = (name: string, type: string): Change => ({
    target: { apiVersion: 'v1', kind: 'Service', name },
    type: 'Create',
    content: { spec: { type, selector: { app: 'x' }, ports: [{ port: 80 }] } },
  });

  it('commits a ClusterIP Service healthy at the first look, without a Verifying step', async () => {
    const ns = await testNamespace(clients.admin, 'hg-svc', {
      deployer: [{ apiGroups: [''], resources: ['services'], verbs: ['*'] }],
    });
    await controller(ns, async () => {
      await clients.admin.create(transaction(ns, 'expose', [service('web', 'ClusterIP')]));
      const txn = await waitForPhase(clients.admin, ns, 'expose', 'Committed');
      expect(txn.status?.health).toMatchObject({ check: 'Commit', result: 'Healthy' });
      expect(txn.status?.items?.[0]?.health).toMatchObject({ status: 'Current', reason: 'ServiceReady' });
      // The Committed Event is created once the status write that waitForPhase saw has returned.
      const reasons = await eventually(async () => {
        const events = await clients.admin.list('v1', 'Event', ns);
        const all = events.items.map((e) => (e as { reason?: string }).reason);
        expect(all).toContain('Committed');
        return all;
      });
      expect(reasons).not.toContain('Verifying');
    });
  });

  it('rolls back a LoadBalancer that gets no address within health.timeout, and says so', async () => {
    const ns = await testNamespace(clients.admin, 'hg-lb', {
      deployer: [{ apiGroups: [''], resources: ['services'], verbs: ['*'] }],
    });
    await controller(ns, async () => {
      await clients.admin.create(
        transaction(ns, 'expose', [service('web', 'LoadBalancer')], { health: { timeout: '3s' } }),
      );
      const txn = await waitForPhase(clients.admin, ns, 'expose', 'RolledBack');
      expect(txn.status?.health).toMatchObject({ check: 'Commit', result: 'TimedOut' });
      const healthy = txn.status?.conditions?.find((c) => c.type === 'Healthy');
      expect(healthy).toMatchObject({ status: 'False', reason: 'HealthCheckTimeout' });
      expect(healthy?.message).toBe(
        `not healthy within 3s: Service ${ns}/web: waiting for the load balancer to get an address`,
      );
      // The Service it created is gone again.
      expect(
        await clients.admin.find({ apiVersion: 'v1', kind: 'Service', name: 'web', namespace: ns }),
      ).toBeUndefined();
    });
  });
});

describe('the health gate', () => {
  it('commits a ConfigMap + Deployment + Service rollout once it is healthy, and can still roll it back', async () => {
    const { ns, hash } = await shop('hg-healthy');
    const service: Change = {
      target: { apiVersion: 'v1', kind: 'Service', name: 'web' },
      type: 'Create',
      content: { spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] } },
    };
    const good = POD_IMAGES.readyAlternative;
    await controller(ns, async () => {
      await clients.admin.create(
        transaction(ns, 'release-v2', [configPatch('v2'), newImage('web', good), service], {
          health: { timeout: '2m' },
        }),
      );
      const txn = await waitForPhase(clients.admin, ns, 'release-v2', 'Committed', 120_000);
      expect(txn.status?.health).toMatchObject({ check: 'Commit', result: 'Healthy' });
      expect(txn.status?.items?.map((i) => i.health?.status)).toEqual([undefined, 'Current', 'Current']);
      expect(txn.status?.items?.[1]?.health?.reason).toBe('RolloutComplete');
      const healthy = txn.status?.conditions?.find((c) => c.type === 'Healthy');
      expect(healthy).toMatchObject({ status: 'True', reason: 'TargetsHealthy' });
      await availableWith(clients.admin, ns, 'web', good);
      const d = await clients.admin.get({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'web',
        namespace: ns,
      });
      expect(d.metadata.annotations?.['deployment.kubernetes.io/revision']).toBe('2');
      expect((await podsOf(clients.admin, ns, 'web')).every((p) => p.ready && p.hash !== hash)).toBe(true);

      // The Deployment controller has written its status and revision since the commit: that is
      // not someone else's change, so a requested rollback restores v1 instead of a conflict.
      await annotate(clients.admin, ns, 'release-v2', { 'tx.janus.io/request-rollback': 'back to v1' });
      const back = await waitForPhase(clients.admin, ns, 'release-v2', 'RolledBack', 120_000);
      expect(back.status?.health).toMatchObject({ check: 'Rollback', result: 'Healthy' });
      // Rolled back once, checked once: the message says so, once.
      expect(back.status?.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(
        /^3 committed change\(s\) rolled back \(rollback requested with the tx\.janus\.io\/request-rollback annotation: back to v1\); 1 target\(s\) healthy after \d+s$/,
      );
      await availableWith(clients.admin, ns, 'web', POD_IMAGES.ready);
      expect(await data(clients.admin, ns, 'app-config')).toEqual({ release: 'v1' });
    });
  });

  it('rolls back a rollout whose pods never become Ready (ProgressDeadlineExceeded); the old pods serve throughout', async () => {
    const { ns, hash } = await shop('hg-never-ready', { progressDeadlineSeconds: 8 });
    await controller(ns, async () => {
      await clients.admin.create(
        transaction(ns, 'release-v2', [configPatch('v2'), newImage('web', POD_IMAGES.neverReady)], {
          health: { timeout: '3m' },
        }),
      );
      // While the gate waits, the two old pods stay Ready (maxUnavailable rounds down to 0).
      await eventually(async () => {
        const txn = (await clients.admin.get({
          apiVersion: 'tx.janus.io/v1alpha1',
          kind: 'Transaction',
          name: 'release-v2',
          namespace: ns,
        })) as unknown as Transaction;
        expect(txn.status?.phase).toBe('Verifying');
        const pods = await podsOf(clients.admin, ns, 'web');
        expect(pods.filter((p) => p.hash === hash && p.ready)).toHaveLength(2);
        expect(pods.some((p) => p.hash !== hash && !p.ready)).toBe(true);
      });
      const txn = await waitForPhase(clients.admin, ns, 'release-v2', 'RolledBack', 180_000);
      const rollingBack = txn.status?.conditions?.find((c) => c.type === 'Healthy');
      expect(rollingBack?.status).toBe('True'); // the rollback's own check passed
      expect(txn.status?.health).toMatchObject({ check: 'Rollback', result: 'Healthy' });
      const ready = txn.status?.conditions?.find((c) => c.type === 'Ready');
      expect(ready?.message).toMatch(/ProgressDeadlineExceeded|made no progress/);
      expect(ready?.message).toContain(`Deployment ${ns}/web`);

      // Back on the previous ReplicaSet: same pod-template-hash, both pods Ready, no others.
      await availableWith(clients.admin, ns, 'web', POD_IMAGES.ready);
      await eventually(async () => {
        const pods = await podsOf(clients.admin, ns, 'web');
        expect(pods).toEqual([
          { hash, ready: true },
          { hash, ready: true },
        ]);
      });
      expect(await data(clients.admin, ns, 'app-config')).toEqual({ release: 'v1' });
    });
  });

  it('rolls back at once when a new pod crash-loops, naming the pod and its state', async () => {
    const { ns } = await shop('hg-crash');
    await controller(ns, async () => {
      await clients.admin.create(
        transaction(ns, 'release-v2', [newImage('web', POD_IMAGES.crashLoop)], { health: { timeout: '5m' } }),
      );
      const txn = await waitForPhase(clients.admin, ns, 'release-v2', 'RolledBack', 180_000);
      const events = await clients.admin.list('v1', 'Event', ns);
      const failed = events.items.find((e) => (e as { reason?: string }).reason === 'HealthCheckFailed') as
        | { message?: string }
        | undefined;
      expect(failed?.message).toMatch(/pod .* container app is in CrashLoopBackOff/);
      expect(txn.status?.items?.[0]?.health?.status).toBe('Current'); // healthy again after the rollback
      await availableWith(clients.admin, ns, 'web', POD_IMAGES.ready);
    });
  });

  it('rolls back when the targets are not healthy within health.timeout', async () => {
    const { ns } = await shop('hg-timeout');
    await controller(ns, async () => {
      await clients.admin.create(
        transaction(ns, 'release-v2', [newImage('web', POD_IMAGES.neverReady)], {
          health: { timeout: '10s' },
        }),
      );
      const txn = await waitForPhase(clients.admin, ns, 'release-v2', 'RolledBack', 180_000);
      const events = await clients.admin.list('v1', 'Event', ns);
      const timedOut = events.items.find((e) => (e as { reason?: string }).reason === 'HealthCheckTimeout') as
        | { message?: string }
        | undefined;
      expect(timedOut?.message).toContain(`not healthy within`);
      expect(timedOut?.message).toContain(`Deployment ${ns}/web`);
      expect(txn.status?.health?.check).toBe('Rollback');
      await availableWith(clients.admin, ns, 'web', POD_IMAGES.ready);
    });
  });

  it('with health.targets None commits without waiting, even for a rollout that never becomes ready', async () => {
    const { ns } = await shop('hg-none');
    await controller(ns, async () => {
      await clients.admin.create(
        transaction(ns, 'release-v2', [newImage('web', POD_IMAGES.neverReady)], {
          health: { targets: 'None' },
        }),
      );
      const txn = await waitForPhase(clients.admin, ns, 'release-v2', 'Committed');
      expect(txn.status?.health).toBeUndefined();
    });
  });
});

/**
 * Issue 21, finding 5, tried as the neighbour who would try it: someone who may create pods in
 * the namespace (and read the StatefulSet), but not change it. A bare pod labelled like the set's
 * pods, carrying a revision hash and an image that cannot be pulled, must not decide the health
 * gate of a Transaction on that StatefulSet: not the rollout's check, nor its rollback's.
 *
 * Issue 34, item 3 of round 4 (item 5): the same neighbour forges the set's controller reference
 * (its uid is readable with `get`), and names the pod like a member the set does not have.
 */
import { describe, expect, it } from 'vitest';
import type { Change } from '../../../src/api/v1alpha1/index.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import {
  ALL_ON_CONFIGMAPS,
  cmTarget,
  getTxn,
  grantRole,
  testNamespace,
  transaction,
  transactionEvents,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { withController } from '../../support/processes/controller-process.ts';

const clients = useClients();

const DEPLOYER = [{ apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['*'] }, ALL_ON_CONFIGMAPS];
/** The neighbour: may run pods beside the set and look at it, nothing more. */
const NEIGHBOUR = [
  { apiGroups: [''], resources: ['pods'], verbs: ['create', 'get', 'list'] },
  { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['get'] },
];
const STS = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' };

type StatefulSet = KubeObject & {
  status?: {
    updateRevision?: string;
    currentRevision?: string;
    readyReplicas?: number;
    updatedReplicas?: number;
  };
};

const newImage = (image: string): Change => ({
  target: STS,
  type: 'Patch',
  content: { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } },
});

/** A namespace with StatefulSet db (2 pods, Ready), a deployer, and alice as the neighbour. */
async function setWithNeighbour(
  prefix: string,
  spec: Record<string, unknown> = { podManagementPolicy: 'Parallel' },
): Promise<{ ns: string; revision: string }> {
  const ns = await testNamespace(clients.admin, prefix, { deployer: DEPLOYER });
  await grantRole(clients.admin, ns, 'neighbour', NEIGHBOUR, {
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'User',
    name: clients.users.alice,
  });
  await clients.admin.create({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: ns },
    spec: {
      replicas: 2,
      serviceName: 'db',
      ...spec,
      selector: { matchLabels: { app: 'db' } },
      template: {
        metadata: { labels: { app: 'db' } },
        spec: { containers: [{ name: 'app', image: POD_IMAGES.ready }] },
      },
    },
  } as KubeObject);
  const sts = await eventually(
    async () => {
      const s = (await clients.admin.get({ ...STS, namespace: ns })) as StatefulSet;
      expect(s.status).toMatchObject({ readyReplicas: 2, updatedReplicas: 2 });
      return s;
    },
    { timeoutMs: 90_000 },
  );
  return { ns, revision: sts.status?.updateRevision ?? '' };
}

/**
 * The neighbour's decoy: a pod labelled as revision `revision` of db, whose image cannot be
 * pulled. Bare, or `forged`: named like a member of db beyond its replicas and claiming db as its
 * controller by uid, as the StatefulSet controller's own pods do.
 */
async function decoy(ns: string, revision: string, forged = false): Promise<string> {
  const name = forged ? 'db-5' : 'db-decoy';
  const sts = forged ? await clients.alice.get({ ...STS, namespace: ns }) : undefined;
  await clients.alice.create({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: ns,
      labels: { app: 'db', 'controller-revision-hash': revision },
      ...(sts && {
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', uid: sts.metadata.uid, controller: true },
        ],
      }),
    },
    spec: { containers: [{ name: 'app', image: POD_IMAGES.imagePullError }] },
  } as KubeObject);
  await eventually(
    async () => {
      const pod = await clients.alice.get({ apiVersion: 'v1', kind: 'Pod', name, namespace: ns });
      expect(JSON.stringify(pod.status)).toContain('ImagePullBackOff');
    },
    { timeoutMs: 60_000 },
  );
  return name;
}

const controller = <T>(ns: string, body: () => Promise<T>): Promise<T> =>
  withController({ kubeconfig: clients.kubeconfigs.controller, namespace: ns, logLevel: 'info' }, body);

// Concurrent: each test has its namespace, its set and its controller, and mostly waits on the
// set's rollout and the health timeout.
describe.concurrent('a neighbour’s decoy pod does not decide a StatefulSet’s health gate', () => {
  it('a decoy with the update revision’s hash, created while the rollout verifies, does not fail it', async () => {
    const { ns } = await setWithNeighbour('iso-decoy-fwd');
    await controller(ns, async () => {
      // Pods that never get Ready keep the gate waiting until health.timeout: the decoy's window.
      await clients.admin.create(
        transaction(ns, 'release', [newImage(POD_IMAGES.neverReady)], { health: { timeout: '90s' } }),
      );
      const updateRevision = await eventually(
        async () => {
          expect((await getTxn(clients.admin, ns, 'release')).status?.phase).toBe('Verifying');
          const s = (await clients.alice.get({ ...STS, namespace: ns })) as StatefulSet;
          expect(s.status?.updateRevision).not.toBe(s.status?.currentRevision);
          return s.status?.updateRevision ?? '';
        },
        { timeoutMs: 90_000 },
      );
      await decoy(ns, updateRevision);
      // The decoy is failing, and the gate still waits on the set's own pods.
      expect((await getTxn(clients.admin, ns, 'release')).status?.phase).toBe('Verifying');
      const txn = await waitForPhase(clients.admin, ns, 'release', 'RolledBack', 150_000);
      // Rolled back because the set's own pods never got Ready in time, not because of the decoy.
      expect(txn.status?.health).toMatchObject({ check: 'Rollback', result: 'Healthy' });
      const messages = await transactionEvents(clients.admin, ns);
      expect(messages.filter((m) => m.includes('db-decoy'))).toEqual([]);
      expect(messages.some((m) => m.startsWith('HealthCheckFailed'))).toBe(false);
      expect(messages.find((m) => m.startsWith('HealthCheckTimeout'))).toContain(`StatefulSet ${ns}/db`);
    });
  }, 300_000);

  // A guard more than a reproduction: whether the unfixed gate looked at the rollback while the
  // set's own pod was still starting (and so counted the decoy) depended on timing.
  it('a decoy placed beforehand with the current revision’s hash does not make the rollback unhealthy', async () => {
    const { ns, revision } = await setWithNeighbour('iso-decoy-back');
    await decoy(ns, revision);
    await controller(ns, async () => {
      await clients.admin.create(
        transaction(ns, 'release', [newImage(POD_IMAGES.crashLoop)], { health: { timeout: '3m' } }),
      );
      const txn = await waitForPhase(clients.admin, ns, 'release', 'RolledBack', 120_000);
      // The rollout failed on the set's own crash-looping pod; the rollback back to `revision`
      // is checked on the set's own pods only.
      expect(txn.status?.health).toMatchObject({ check: 'Rollback', result: 'Healthy' });
      const messages = await transactionEvents(clients.admin, ns);
      expect(messages.filter((m) => m.includes('db-decoy'))).toEqual([]);
      expect(
        messages.some((m) =>
          /HealthCheckFailed: .*pod .*db-[01] container app is in CrashLoopBackOff/.test(m),
        ),
      ).toBe(true);
    });
  }, 300_000);

  it('a pod forging the set’s controller reference, named like a member beyond its replicas, does not fail an OrderedReady rollout', async () => {
    // OrderedReady, and 20 s before a new pod counts as available: the set's controller removes a
    // pod beyond its replicas only once all of its own are available, so the forged one stays
    // for the rollout's length.
    const { ns } = await setWithNeighbour('iso-decoy-forged', {
      podManagementPolicy: 'OrderedReady',
      minReadySeconds: 20,
    });
    await controller(ns, async () => {
      await clients.admin.create(
        transaction(ns, 'release', [newImage(POD_IMAGES.readyAlternative)], { health: { timeout: '4m' } }),
      );
      const updateRevision = await eventually(
        async () => {
          expect((await getTxn(clients.admin, ns, 'release')).status?.phase).toBe('Verifying');
          const s = (await clients.alice.get({ ...STS, namespace: ns })) as StatefulSet;
          expect(s.status?.updateRevision).not.toBe(s.status?.currentRevision);
          expect(s.status?.updatedReplicas).toBeGreaterThanOrEqual(1);
          return s.status?.updateRevision ?? '';
        },
        { timeoutMs: 90_000 },
      );
      const forged = await decoy(ns, updateRevision, true);
      // The set's controller took it for a member too (it counts it), and the rollout goes on.
      await eventually(async () => {
        const s = (await clients.alice.get({ ...STS, namespace: ns })) as StatefulSet & {
          status?: { replicas?: number };
        };
        expect(s.status?.replicas).toBe(3);
      });
      expect((await getTxn(clients.admin, ns, 'release')).status?.phase).toBe('Verifying');
      // A neighbour's transaction beside it commits promptly meanwhile.
      await clients.admin.create(
        transaction(ns, 'beside', [
          { target: cmTarget('beside'), type: 'Create', content: { data: { a: '1' } } },
        ]),
      );
      await waitForPhase(clients.admin, ns, 'beside', 'Committed', 30_000);
      const txn = await waitForPhase(clients.admin, ns, 'release', 'Committed', 240_000);
      expect(txn.status?.health).toMatchObject({ check: 'Commit', result: 'Healthy' });
      const messages = await transactionEvents(clients.admin, ns);
      expect(messages.filter((m) => m.includes(forged))).toEqual([]);
    });
  }, 400_000);
});

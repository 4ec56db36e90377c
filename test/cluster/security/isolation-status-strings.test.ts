/**
 * Tenant against tenant: strings the controller copies into a Transaction's status from outside
 * (a cancel reason, a kubelet's message, a custom resource's Ready reason) never make the API
 * server refuse the status write. Before, each wedged its transaction with its Leases held: the
 * write was refused, the work queue retried forever and the deadline was never looked at.
 * Against the shipped manifests and a controller running as its own ServiceAccount.
 */
import { describe, expect, it } from 'vitest';
import type { Change, Transaction } from '../../../src/api/v1alpha1/index.ts';
import { applyManifests } from '../../../src/cli/demo/manifests.ts';
import { PatchType } from '../../../src/kube/client.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import {
  grantRole,
  leasesOf,
  testNamespace,
  transaction,
  txnRef,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { availableWith, deployment } from '../../support/cluster/workloads.ts';
import { eventually } from '../../support/eventually.ts';
import { type ControllerProcess, withController } from '../../support/processes/controller-process.ts';

const clients = useClients();

const controllerFor = <T>(ns: string, body: (c: ControllerProcess) => Promise<T>): Promise<T> =>
  withController({ kubeconfig: clients.kubeconfigs.controller, namespace: ns, logLevel: 'info' }, body);

/** Status writes the API server refused show in the controller's log as 422 Invalid. */
async function expectNoRefusedStatusWrite(controller: ControllerProcess): Promise<void> {
  expect(await controller.logs()).not.toMatch(/\/status: 422 Invalid/);
}

/** Terminal, with every Lease released, no later than the deadline the status names. */
async function expectEndedInTime(ns: string, txn: Transaction): Promise<void> {
  const completedAt = Date.parse(txn.status?.completedAt ?? '');
  expect(completedAt).toBeLessThanOrEqual(Date.parse(txn.status?.deadline ?? ''));
  await eventually(async () => expect(await leasesOf(clients.admin, ns)).toEqual([]));
}

/**
 * A transaction whose LoadBalancer Service never gets an address here: its gate waits (1h) with
 * the Service's lock held, until its 2m deadline or a cancel.
 */
const exposeForever = (ns: string): Transaction =>
  transaction(
    ns,
    'expose',
    [
      {
        target: { apiVersion: 'v1', kind: 'Service', name: 'public' },
        type: 'Create',
        content: { spec: { type: 'LoadBalancer', selector: { app: 'x' }, ports: [{ port: 80 }] } },
      },
    ],
    { timeout: '2m', health: { timeout: '1h' } },
  );

const conditionOf = (txn: Transaction, type: string) => txn.status?.conditions?.find((c) => c.type === type);

describe('a tenant cannot wedge a transaction with what it writes into its status', () => {
  it('a 40 KB cancel reason, set by the tenant: RollingBack → RolledBack by the deadline, locks released', async () => {
    const ns = await testNamespace(clients.admin, 'iso-cancel', {
      deployer: [{ apiGroups: [''], resources: ['services'], verbs: ['*'] }],
    });
    // The tenant: may create Transactions (as "deployer") and cancel them, nothing more.
    await grantRole(
      clients.admin,
      ns,
      'tenant',
      [
        { apiGroups: ['tx.janus.io'], resources: ['transactions'], verbs: ['create', 'get', 'patch'] },
        {
          apiGroups: [''],
          resources: ['serviceaccounts'],
          verbs: ['impersonate'],
          resourceNames: ['deployer'],
        },
      ],
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: clients.users.alice },
    );
    await controllerFor(ns, async (controller) => {
      // A LoadBalancer never gets an address here: the gate waits, with the Service's lock held.
      await clients.alice.create(exposeForever(ns));
      await waitForPhase(clients.admin, ns, 'expose', 'Verifying');
      expect(await leasesOf(clients.admin, ns)).toHaveLength(1);

      const reason = `stop: ${'x'.repeat(40 * 1024)}`;
      await clients.alice.patch(
        txnRef(ns, 'expose'),
        { metadata: { annotations: { 'tx.janus.io/cancel': reason } } },
        PatchType.merge,
      );
      const txn = await waitForPhase(clients.admin, ns, 'expose', 'RolledBack');
      await expectEndedInTime(ns, txn);
      const ready = conditionOf(txn, 'Ready');
      expect(ready?.message).toMatch(
        /^1 committed change\(s\) rolled back \(cancelled with the tx\.janus\.io\/cancel annotation: stop: x+/,
      );
      expect(ready?.message).toContain('[truncated]');
      expect(ready?.message?.length).toBeLessThanOrEqual(32768);
      expect(txn.metadata.annotations ?? {}).not.toHaveProperty('tx.janus.io/cancel');
      await expectNoRefusedStatusWrite(controller);
    });
  });

  it('a kubelet message quoting a 5,000-character image name: rolled back for that reason, in time', async () => {
    const ns = await testNamespace(clients.admin, 'iso-kubelet', {
      deployer: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] }],
    });
    await clients.admin.create(deployment(ns, 'web', POD_IMAGES.ready, { replicas: 1 }));
    await availableWith(clients.admin, ns, 'web', POD_IMAGES.ready, 1);
    // Kubernetes does not bound an image reference; kwok answers it with ImagePullBackOff and the
    // kubelet's message quoting it whole.
    const image = `registry.example/${'a'.repeat(5000)}:image-pull-error`;
    const change: Change = {
      target: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      type: 'Patch',
      content: { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } },
    };
    await controllerFor(ns, async (controller) => {
      await clients.admin.create(
        transaction(ns, 'rollout', [change], { timeout: '90s', health: { timeout: '80s' } }),
      );
      const txn = await waitForPhase(clients.admin, ns, 'rollout', 'RolledBack', 120_000);
      await expectEndedInTime(ns, txn);
      const ready = conditionOf(txn, 'Ready');
      expect(ready?.message).toContain('ImagePullBackOff');
      expect(ready?.message).toContain('[truncated]');
      for (const item of txn.status?.items ?? []) {
        expect(item.health?.message?.length ?? 0).toBeLessThanOrEqual(1024);
      }
      expect(txn.status?.health?.message?.length ?? 0).toBeLessThanOrEqual(4096);
      await expectNoRefusedStatusWrite(controller);
    });
  });

  it('a custom resource whose Ready reason has spaces: Verifying shows it as a CamelCase reason', async () => {
    await applyManifests(clients.admin, [DATABASE_CRD]);
    const ns = await testNamespace(clients.admin, 'iso-cr', {
      deployer: [{ apiGroups: [DATABASE_GROUP], resources: ['databases'], verbs: ['*'] }],
    });
    // Its own operator says, in its own words, that it is not ready yet.
    await clients.admin.create({
      apiVersion: `${DATABASE_GROUP}/v1`,
      kind: 'Database',
      metadata: { name: 'orders', namespace: ns },
      spec: { size: 'small' },
      status: {
        conditions: [
          { type: 'Ready', status: 'False', reason: 'Waiting for DB', message: 'the primary is starting' },
        ],
      },
    } as KubeObject);
    const change: Change = {
      target: { apiVersion: `${DATABASE_GROUP}/v1`, kind: 'Database', name: 'orders' },
      type: 'Patch',
      content: { spec: { size: 'large' } },
    };
    await controllerFor(ns, async (controller) => {
      await clients.admin.create(
        transaction(ns, 'grow', [change], { timeout: '2m', health: { targets: 'All', timeout: '90s' } }),
      );
      const verifying = await waitForPhase(clients.admin, ns, 'grow', 'Verifying');
      expect(conditionOf(verifying, 'Healthy')).toMatchObject({ status: 'False', reason: 'WaitingForDB' });
      expect(verifying.status?.items?.[0]?.health).toMatchObject({
        status: 'InProgress',
        reason: 'WaitingForDB',
      });
      expect(await leasesOf(clients.admin, ns)).toHaveLength(1);

      await clients.admin.patch(
        { apiVersion: `${DATABASE_GROUP}/v1`, kind: 'Database', name: 'orders', namespace: ns },
        { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'Running' }] } },
        PatchType.merge,
      );
      const txn = await waitForPhase(clients.admin, ns, 'grow', 'Committed');
      await expectEndedInTime(ns, txn);
      await expectNoRefusedStatusWrite(controller);
    });
  });
});

describe('a status write refused for a reason nobody thought of', () => {
  it('still makes its transition, saying StatusWriteRefused: the cancel ends RolledBack, locks released', async () => {
    // A cluster admin's policy the controller knows nothing about: no status message may carry
    // a word. The tenant's cancel reason carries it.
    await applyManifests(clients.admin, NO_WORD_POLICY);
    const ns = await testNamespace(clients.admin, 'iso-refused', {
      deployer: [{ apiGroups: [''], resources: ['services'], verbs: ['*'] }],
      labels: { [POLICY_LABEL]: 'on' },
    });
    await policyInForce(ns);
    await controllerFor(ns, async () => {
      await clients.admin.create(exposeForever(ns));
      await waitForPhase(clients.admin, ns, 'expose', 'Verifying');
      await clients.admin.patch(
        txnRef(ns, 'expose'),
        { metadata: { annotations: { 'tx.janus.io/cancel': 'the plumbus leaked' } } },
        PatchType.merge,
      );
      const txn = await waitForPhase(clients.admin, ns, 'expose', 'RolledBack');
      await expectEndedInTime(ns, txn);
      // RollingBack carries the reason; RolledBack too, should the policy only have become
      // active in between.
      expect(conditionOf(txn, 'Ready')?.message).toMatch(
        /the API server refused the status for (RollingBack|RolledBack)/,
      );
      expect(conditionOf(txn, 'Ready')?.message).not.toContain('plumbus');
      // Created once the refused write is retried without messages; when the refusal came only at
      // RolledBack, that is after waitForPhase saw the phase.
      await eventually(async () => {
        const events = await clients.admin.list('v1', 'Event', ns);
        expect(events.items.map((e) => (e as { reason?: string }).reason)).toContain('StatusWriteRefused');
      });
    });
  });
});

/**
 * The API server enforces a new admission policy only once its informers have it (about a
 * second): until a dry-run status write carrying the word is refused, the test would race it.
 */
async function policyInForce(ns: string): Promise<void> {
  const change: Change = {
    target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'probe' },
    type: 'Patch',
    content: { data: { probe: 'yes' } },
  };
  await clients.admin.create(transaction(ns, 'policy-probe', [change]));
  const probe = txnRef(ns, 'policy-probe');
  const refused = {
    status: {
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'Probe',
          message: 'plumbus',
          lastTransitionTime: new Date().toISOString(),
        },
      ],
    },
  };
  await eventually(async () => {
    const outcome = await clients.admin
      .patch(probe, refused, PatchType.merge, { subresource: 'status', dryRun: true })
      .then(
        () => 'accepted',
        (e: unknown) => String(e),
      );
    expect(outcome).toContain('forbidden word');
  });
  await clients.admin.delete(probe);
}

const POLICY_LABEL = 'isolation-strings.example.com/no-word';

/** Refuses (422) a Transaction status whose conditions say "plumbus", in labelled namespaces. */
const NO_WORD_POLICY = [
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name: 'isolation-strings-no-word' },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: ['tx.janus.io'],
            apiVersions: ['*'],
            operations: ['UPDATE'],
            resources: ['transactions/status'],
          },
        ],
      },
      validations: [
        {
          expression:
            "!has(object.status.conditions) || !object.status.conditions.exists(c, has(c.message) && c.message.contains('plumbus'))",
          message: 'status messages may not name the forbidden word',
          reason: 'Invalid',
        },
      ],
    },
  },
  {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name: 'isolation-strings-no-word' },
    spec: {
      policyName: 'isolation-strings-no-word',
      validationActions: ['Deny'],
      matchResources: { namespaceSelector: { matchLabels: { [POLICY_LABEL]: 'on' } } },
    },
  },
] as unknown as KubeObject[];

const DATABASE_GROUP = 'isolation-strings.example.com';

/** A custom resource with a Ready condition of its own (no status subresource: the test plays its operator). */
const DATABASE_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `databases.${DATABASE_GROUP}` },
  spec: {
    group: DATABASE_GROUP,
    scope: 'Namespaced',
    names: { plural: 'databases', singular: 'database', kind: 'Database' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
              status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        },
      },
    ],
  },
} as unknown as KubeObject;

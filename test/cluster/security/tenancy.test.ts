/**
 * Tenancy, tried as an attacker would, against the shipped manifests (RBAC in manifests/rbac, the
 * admission policy in manifests/policy) and a controller running as its own ServiceAccount.
 * Each attack is refused with a message that says why, and nothing else is disturbed.
 */
import { describe, expect, it } from 'vitest';
import { PatchType } from '../../../src/kube/client.ts';
import { isForbidden } from '../../../src/kube/errors.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { leaseName } from '../../../src/locks/lease-name.ts';
import { resolveTarget } from '../../../src/saga/targets.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { refusal } from '../../support/cluster/refusal.ts';
import {
  ALL_ON_CONFIGMAPS,
  annotate,
  cmTarget,
  configMap,
  data,
  getTxn,
  grantElsewhere,
  grantRole,
  leasesOf,
  type Rule,
  serviceAccount,
  testNamespace,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { type ControllerProcess, withController } from '../../support/processes/controller-process.ts';

const clients = useClients();

const controllerFor = <T>(ns: string, body: (c: ControllerProcess) => Promise<T>): Promise<T> =>
  withController({ kubeconfig: clients.kubeconfigs.controller, namespace: ns, logLevel: 'info' }, body);

/** Gives a user exactly these rules in a namespace. */
const grantUser = (namespace: string, user: string, name: string, rules: Rule[]) =>
  grantRole(clients.admin, namespace, name, rules, {
    apiGroup: 'rbac.authorization.k8s.io',
    kind: 'User',
    name: user,
  });

const CREATE_TRANSACTIONS = {
  apiGroups: ['tx.janus.io'],
  resources: ['transactions'],
  verbs: ['create', 'get'],
};

describe('creating a Transaction never lets its author act as a ServiceAccount they could not already', () => {
  it('refuses a Transaction naming a ServiceAccount its author may not impersonate, naming both', async () => {
    const ns = await testNamespace(clients.admin, 'sec-vap', { deployer: [ALL_ON_CONFIGMAPS] });
    // The classic escalation: a powerful ServiceAccount in the namespace, and a user who may only
    // create Transactions.
    await serviceAccount(clients.admin, ns, 'powerful', [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
    ]);
    await grantUser(ns, clients.users.alice, 'txn-author', [CREATE_TRANSACTIONS]);

    const error = await refusal(
      clients.alice.create(
        transaction(
          ns,
          'escalate',
          [{ target: cmTarget('x'), type: 'Create', content: { data: { a: '1' } } }],
          {
            serviceAccountName: 'powerful',
          },
        ),
      ),
    );
    expect(error.status).toBe(403);
    expect(error.serverMessage).toContain(
      `${clients.users.alice} may not act as ServiceAccount ${ns}/powerful`,
    );
    expect(
      await clients.admin.find({
        apiVersion: 'tx.janus.io/v1alpha1',
        kind: 'Transaction',
        name: 'escalate',
        namespace: ns,
      }),
    ).toBeUndefined();
  });

  it('allows it once the author may impersonate that ServiceAccount (and only that one)', async () => {
    const ns = await testNamespace(clients.admin, 'sec-vap-ok', { deployer: [ALL_ON_CONFIGMAPS] });
    await serviceAccount(clients.admin, ns, 'other', [ALL_ON_CONFIGMAPS]);
    await grantUser(ns, clients.users.alice, 'txn-author', [
      CREATE_TRANSACTIONS,
      {
        apiGroups: [''],
        resources: ['serviceaccounts'],
        verbs: ['impersonate'],
        resourceNames: ['deployer'],
      },
    ]);
    const change = [{ target: cmTarget('x'), type: 'Create' as const, content: { data: { a: '1' } } }];
    await clients.alice.create(transaction(ns, 'allowed', change));
    const error = await refusal(
      clients.alice.create(transaction(ns, 'not-that-one', change, { serviceAccountName: 'other' })),
    );
    expect(error.serverMessage).toContain(`may not act as ServiceAccount ${ns}/other`);
    await controllerFor(ns, async () => {
      await waitForPhase(clients.admin, ns, 'allowed', 'Committed');
    });
  });

  it('refuses a transaction whose change creates a Transaction running as a stronger ServiceAccount', async () => {
    const ns = await testNamespace(clients.admin, 'sec-hop', {
      deployer: [
        ALL_ON_CONFIGMAPS,
        { apiGroups: ['tx.janus.io'], resources: ['transactions'], verbs: ['*'] },
      ],
    });
    await serviceAccount(clients.admin, ns, 'powerful', [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
    ]);
    const inner = transaction(
      ns,
      'inner',
      [{ target: cmTarget('x'), type: 'Create', content: { data: { a: '1' } } }],
      {
        serviceAccountName: 'powerful',
      },
    );
    await clients.admin.create(
      transaction(ns, 'outer', [
        { target: cmTarget('marker'), type: 'Create', content: { data: { a: '1' } } },
        {
          target: { apiVersion: 'tx.janus.io/v1alpha1', kind: 'Transaction', name: 'inner' },
          type: 'Create',
          content: { spec: inner.spec },
        },
      ]),
    );
    await controllerFor(ns, async () => {
      const outer = await waitForPhase(clients.admin, ns, 'outer', 'Failed');
      const ready = outer.status?.conditions?.find((c) => c.type === 'Ready');
      expect(ready?.reason).toBe('DryRunFailed');
      expect(ready?.message).toContain(
        `system:serviceaccount:${ns}:deployer may not act as ServiceAccount ${ns}/powerful`,
      );
    });
    expect(await data(clients.admin, ns, 'marker')).toBeUndefined();
    expect(await leasesOf(clients.admin, ns)).toEqual([]);
  });
});

describe('the controller holds only what it needs', () => {
  const controller = () => clients.controller;

  it('cannot read or write Secrets and ConfigMaps, impersonate, or create Transactions outside opted-in namespaces', async () => {
    const ns = await testNamespace(clients.admin, 'sec-rbac');
    const outside = `sec-outside-${ns.slice(-6)}`;
    await clients.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: outside } });
    try {
      await clients.admin.create(configMap(outside, 'private', { a: '1' }));
      const attempts: Array<[string, () => Promise<unknown>]> = [
        ['read a Secret in kube-system', () => controller().list('v1', 'Secret', 'kube-system')],
        [
          'read a ConfigMap elsewhere',
          () =>
            controller().get({ apiVersion: 'v1', kind: 'ConfigMap', name: 'private', namespace: outside }),
        ],
        [
          'write a ConfigMap in kube-system',
          () => controller().create(configMap('kube-system', 'planted', { a: '1' })),
        ],
        [
          'create a Transaction elsewhere',
          () =>
            controller().create(transaction(outside, 'planted', [{ target: cmTarget('y'), type: 'Delete' }])),
        ],
        [
          'create a Transaction in its own namespace',
          () =>
            controller().create(
              transaction('janus-system', 'planted', [{ target: cmTarget('y'), type: 'Delete' }], {
                serviceAccountName: 'janus-controller',
              }),
            ),
        ],
        [
          'take a Lease elsewhere',
          () =>
            controller().create({
              apiVersion: 'coordination.k8s.io/v1',
              kind: 'Lease',
              metadata: { name: 'squat', namespace: outside },
              spec: {},
            }),
        ],
        [
          'create a ClusterRoleBinding',
          () =>
            controller().create({
              apiVersion: 'rbac.authorization.k8s.io/v1',
              kind: 'ClusterRoleBinding',
              metadata: { name: 'janus-planted' },
              roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
              subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'mallory' }],
            }),
        ],
      ];
      for (const [what, attempt] of attempts) {
        const error = await refusal(attempt());
        expect(isForbidden(error), `${what}: ${error.message}`).toBe(true);
      }
      // In an opted-in namespace it may act as its ServiceAccounts, and only there.
      const probe = await clients.admin.create<KubeObject & { status?: { allowed?: boolean } }>({
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        metadata: { name: '' },
        spec: {
          user: clients.users.controller,
          resourceAttributes: {
            verb: 'impersonate',
            resource: 'serviceaccounts',
            namespace: ns,
            name: 'any',
          },
        },
      } as KubeObject);
      expect(probe.status?.allowed).toBe(true);
      const elsewhere = await clients.admin.create<KubeObject & { status?: { allowed?: boolean } }>({
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        metadata: { name: '' },
        spec: {
          user: clients.users.controller,
          resourceAttributes: {
            verb: 'impersonate',
            resource: 'serviceaccounts',
            namespace: 'kube-system',
            name: 'default',
          },
        },
      } as KubeObject);
      expect(elsewhere.status?.allowed).toBe(false);
    } finally {
      await clients.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: outside });
    }
  });

  it('fails a Transaction in a namespace that did not opt in, saying how to grant it, with nothing changed', async () => {
    const ns = `sec-nogrant-${Math.random().toString(16).slice(2, 8)}`;
    await clients.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    try {
      await serviceAccount(clients.admin, ns, 'deployer', [ALL_ON_CONFIGMAPS]);
      await clients.admin.create(
        transaction(ns, 'ungranted', [
          { target: cmTarget('x'), type: 'Create', content: { data: { a: '1' } } },
        ]),
      );
      await controllerFor(ns, async () => {
        const txn = await waitForPhase(clients.admin, ns, 'ungranted', 'Failed');
        const ready = txn.status?.conditions?.find((c) => c.type === 'Ready');
        expect(ready?.reason).toBe('NamespaceNotGranted');
        expect(ready?.message).toContain(`Janus has not been granted namespace "${ns}"`);
        expect(ready?.message).toContain('janus-tenant');
      });
      expect(await data(clients.admin, ns, 'x')).toBeUndefined();
    } finally {
      await clients.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns });
    }
  });
});

describe('the rollback store never adopts an object it did not create', () => {
  for (const kind of ['ConfigMap', 'Secret'] as const) {
    it(`fails at prepare when a ${kind} of the store's name exists, leaving it and the targets untouched`, async () => {
      const ns = await testNamespace(clients.admin, 'sec-store', {
        deployer: [{ apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['*'] }],
      });
      const precious =
        kind === 'ConfigMap'
          ? configMap(ns, 'deploy-rollback', { precious: 'data' })
          : {
              apiVersion: 'v1',
              kind: 'Secret',
              metadata: { name: 'deploy-rollback', namespace: ns },
              stringData: { precious: 'data' },
            };
      const before = await clients.admin.create(precious as KubeObject);
      await clients.admin.create({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'creds', namespace: ns },
        stringData: { password: 'old' },
      });
      await clients.admin.create(configMap(ns, 'settings', { mode: 'old' }));
      await clients.admin.create(
        transaction(ns, 'deploy', [
          { target: cmTarget('settings'), type: 'Patch', content: { data: { mode: 'new' } } },
          {
            target: { apiVersion: 'v1', kind: 'Secret', name: 'creds' },
            type: 'Patch',
            content: { stringData: { password: 'new' } },
          },
        ]),
      );
      await controllerFor(ns, async () => {
        const txn = await waitForPhase(clients.admin, ns, 'deploy', 'Failed');
        const ready = txn.status?.conditions?.find((c) => c.type === 'Ready');
        expect(ready?.reason).toBe('RollbackStoreClash');
        expect(ready?.message).toContain(`${kind} ${ns}/deploy-rollback`);
        expect(txn.status?.items?.some((i) => i.committed)).toBe(false);
      });
      const after = await clients.admin.get({
        apiVersion: 'v1',
        kind,
        name: 'deploy-rollback',
        namespace: ns,
      });
      expect(after.metadata.ownerReferences).toBeUndefined();
      expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
      expect(JSON.stringify(after.data)).toContain(
        kind === 'ConfigMap' ? 'data' : Buffer.from('data').toString('base64'),
      );
      expect(await data(clients.admin, ns, 'settings')).toEqual({ mode: 'old' });
      expect(await leasesOf(clients.admin, ns)).toEqual([]);
      // Deleting the failed Transaction does not take the object with it.
      await clients.admin.delete({
        apiVersion: 'tx.janus.io/v1alpha1',
        kind: 'Transaction',
        name: 'deploy',
        namespace: ns,
      });
      await new Promise((r) => setTimeout(r, 2_000)); // give the garbage collector its chance
      expect(
        await clients.admin.find({ apiVersion: 'v1', kind, name: 'deploy-rollback', namespace: ns }),
      ).toBeDefined();
    });
  }

  // The wait itself (StoreAwaitingGarbageCollection) is decided by existingStoreVerdict (unit
  // tests): here the collector may win the race, so only the outcome is asserted.
  it('commits a re-created Transaction whose deleted namesake left a store for the garbage collector', async () => {
    const ns = await testNamespace(clients.admin, 'sec-store-gc', {
      deployer: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }],
    });
    await clients.admin.create(configMap(ns, 'settings', { mode: 'old' }));
    const ownerless = await clients.admin.create(forgedStore(ns, []));
    await clients.admin.create(transaction(ns, 'deploy', [settingsChange]));
    await controllerFor(ns, async () => {
      const txn = await waitForPhase(clients.admin, ns, 'deploy', 'Committed');
      const store = await clients.admin.get({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'deploy-rollback',
        namespace: ns,
      });
      expect(store.metadata.uid).not.toBe(ownerless.metadata.uid);
      expect(store.metadata.ownerReferences?.[0]?.uid).toBe(txn.metadata.uid);
    });
    expect(await data(clients.admin, ns, 'settings')).toEqual({ mode: 'new' });
  });

  it('fails at once, not waits, on a forged "deleted namesake" store held by a finalizer', async () => {
    // Anyone who may write ConfigMaps can forge the owner; the finalizer would hold the object
    // (and this transaction with its locks) until the deadline if the controller waited for it.
    const ns = await testNamespace(clients.admin, 'sec-store-hold', {
      deployer: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['*'] }],
    });
    await clients.admin.create(configMap(ns, 'settings', { mode: 'old' }));
    await clients.admin.create(forgedStore(ns, ['attacker.example.com/hold']));
    await clients.admin.create(transaction(ns, 'deploy', [settingsChange]));
    try {
      await controllerFor(ns, async () => {
        const txn = await waitForPhase(clients.admin, ns, 'deploy', 'Failed');
        const ready = txn.status?.conditions?.find((c) => c.type === 'Ready');
        expect(ready?.reason).toBe('RollbackStoreClash');
        expect(ready?.message).toContain(`ConfigMap ${ns}/deploy-rollback`);
        expect(txn.status?.items?.some((i) => i.committed)).toBe(false);
      });
      expect(await data(clients.admin, ns, 'settings')).toEqual({ mode: 'old' });
      expect(await leasesOf(clients.admin, ns)).toEqual([]);
    } finally {
      await clients.admin.client.request({
        method: 'PATCH',
        path: `/api/v1/namespaces/${ns}/configmaps/deploy-rollback`,
        contentType: PatchType.merge,
        body: { metadata: { finalizers: null } },
      });
    }
  });
});

const settingsChange = {
  target: cmTarget('settings'),
  type: 'Patch' as const,
  content: { data: { mode: 'new' } },
};

/** A ConfigMap named as the store of "deploy", owned by a Transaction "deploy" that does not exist. */
function forgedStore(ns: string, finalizers: string[]): KubeObject {
  return {
    ...configMap(ns, 'deploy-rollback', { 'index.json': '{}' }),
    metadata: {
      name: 'deploy-rollback',
      namespace: ns,
      finalizers,
      ownerReferences: [
        {
          apiVersion: 'tx.janus.io/v1alpha1',
          kind: 'Transaction',
          name: 'deploy',
          uid: '00000000-0000-4000-8000-000000000000',
          controller: true,
        },
      ],
    },
  } as KubeObject;
}

describe('a rollback restores only what prepare stored', () => {
  it('refuses a store edited to make the ServiceAccount restore something else, and restores the rest', async () => {
    // The deployer may change Secrets; someone who may only write ConfigMaps edits the store so
    // that the rollback would "restore" a Secret of their choosing as the deployer.
    const ns = await testNamespace(clients.admin, 'sec-tamper', {
      deployer: [{ apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['*'] }],
    });
    await clients.admin.create(configMap(ns, 'first', { v: '1' }));
    await clients.admin.create(configMap(ns, 'second', { v: '1' }));
    await clients.admin.create(
      transaction(ns, 'deploy', [
        { target: cmTarget('first'), type: 'Delete' }, // its undo re-creates the stored object
        { target: cmTarget('second'), type: 'Patch', content: { data: { v: '2' } } },
      ]),
    );
    await controllerFor(ns, async () => {
      await waitForPhase(clients.admin, ns, 'deploy', 'Committed');
      const store = await clients.admin.get({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        name: 'deploy-rollback',
        namespace: ns,
      });
      const forged = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'planted', namespace: ns },
        stringData: { token: 'attacker' },
      };
      const data = { ...(store.data as Record<string, string>), 'item-0': JSON.stringify(forged) };
      await clients.admin.replace({ ...store, data } as KubeObject);
      await annotate(clients.admin, ns, 'deploy', { 'tx.janus.io/request-rollback': 'test' });
      const txn = await waitForPhase(clients.admin, ns, 'deploy', 'Failed');
      const item = txn.status?.items?.[0];
      expect(item?.rolledBack).toBe(false);
      expect(item?.error).toContain(
        'the prior state of change 0 is not restored: it was modified in the rollback store after prepare',
      );
      expect(txn.status?.items?.[1]?.rolledBack).toBe(true);
    });
    expect(
      await clients.admin.find({ apiVersion: 'v1', kind: 'Secret', name: 'planted', namespace: ns }),
    ).toBeUndefined();
    expect(await data(clients.admin, ns, 'first')).toBeUndefined(); // left for a human
    expect(await data(clients.admin, ns, 'second')).toEqual({ v: '1' });
  });
});

describe('no lock without the right to write the target', () => {
  it('a ServiceAccount without rights on a target in another namespace takes no Lease there and blocks nobody', async () => {
    const victim = await testNamespace(clients.admin, 'sec-victim', { deployer: [ALL_ON_CONFIGMAPS] });
    const squatter = await testNamespace(clients.admin, 'sec-squat', { deployer: [ALL_ON_CONFIGMAPS] });
    await clients.admin.create(configMap(victim, 'release', { version: '1' }));
    // The squatter's transaction has the longest deadline the CRD allows; its SA has no rights in victim.
    await clients.admin.create(
      transaction(
        squatter,
        'squat',
        [{ target: cmTarget('release', victim), type: 'Patch', content: { data: { version: 'evil' } } }],
        {
          timeout: '24h',
          lockTimeout: '1h',
        },
      ),
    );
    await controllerFor(squatter, async () => {
      const txn = await waitForPhase(clients.admin, squatter, 'squat', 'Failed');
      const ready = txn.status?.conditions?.find((c) => c.type === 'Ready');
      expect(ready?.reason).toBe('DryRunFailed');
      expect(ready?.message).toContain(`system:serviceaccount:${squatter}:deployer`);
    });
    const lock = leaseName(resolveTarget(cmTarget('release', victim), squatter, true));
    expect(
      await clients.admin.find({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        name: lock,
        namespace: victim,
      }),
    ).toBeUndefined();
    // The victim's own release goes through at once.
    await clients.admin.create(
      transaction(victim, 'release-2', [
        { target: cmTarget('release'), type: 'Patch', content: { data: { version: '2' } } },
      ]),
    );
    await controllerFor(victim, async () => {
      await waitForPhase(clients.admin, victim, 'release-2', 'Committed');
    });
    expect(await data(clients.admin, victim, 'release')).toEqual({ version: '2' });
  });

  it('the CRD bounds lockTimeout to 1h and timeout to 24h', async () => {
    const ns = await testNamespace(clients.admin, 'sec-bounds', { deployer: [ALL_ON_CONFIGMAPS] });
    const change = [{ target: cmTarget('x'), type: 'Delete' as const }];
    const lock = await refusal(
      clients.admin.create(transaction(ns, 'long-lock', change, { lockTimeout: '61m' })),
    );
    expect(lock.serverMessage).toContain('lockTimeout must be at most 1h');
    const deadline = await refusal(
      clients.admin.create(transaction(ns, 'long-deadline', change, { timeout: '25h' })),
    );
    expect(deadline.serverMessage).toContain('timeout must be at most 24h');
  });
});

describe('snapshots stay as private as their source', () => {
  it('keeps the prior state of a target in another namespace out of the ConfigMap others can view', async () => {
    const source = await testNamespace(clients.admin, 'sec-source');
    const home = await testNamespace(clients.admin, 'sec-home', { deployer: [ALL_ON_CONFIGMAPS] });
    await grantElsewhere(clients.admin, source, { namespace: home, name: 'deployer' }, [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(source, 'rates', { secretish: 'only-source-viewers' }));
    await clients.admin.create(configMap(home, 'local', { plain: 'value' }));
    await clients.admin.create(
      transaction(home, 'cross', [
        { target: cmTarget('local'), type: 'Patch', content: { data: { plain: 'new' } } },
        { target: cmTarget('rates', source), type: 'Patch', content: { data: { secretish: 'changed' } } },
      ]),
    );
    await controllerFor(home, async () => {
      await waitForPhase(clients.admin, home, 'cross', 'Committed');
    });
    const storeMap = await clients.admin.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'cross-rollback',
      namespace: home,
    });
    expect(JSON.stringify(storeMap.data)).toContain('value'); // the same-namespace prior state
    expect(JSON.stringify(storeMap.data)).not.toContain('only-source-viewers');
    const storeSecret = await clients.admin.get({
      apiVersion: 'v1',
      kind: 'Secret',
      name: 'cross-rollback',
      namespace: home,
    });
    const decoded = Object.values((storeSecret.data ?? {}) as Record<string, string>)
      .map((v) => Buffer.from(v, 'base64').toString('utf8'))
      .join('');
    expect(decoded).toContain('only-source-viewers');
    // And the rollback from that private store is exact.
    await annotate(clients.admin, home, 'cross', { 'tx.janus.io/request-rollback': 'test' });
    await controllerFor(home, async () => {
      await waitForPhase(clients.admin, home, 'cross', 'RolledBack');
    });
    expect(await data(clients.admin, source, 'rates')).toEqual({ secretish: 'only-source-viewers' });
    expect((await getTxn(clients.admin, home, 'cross')).status?.phase).toBe('RolledBack');
  });
});

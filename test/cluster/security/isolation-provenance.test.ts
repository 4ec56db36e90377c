/**
 * Provenance (where a Transaction came from in Git, its place in Git order, the Source whose
 * commit it applies) and Sources themselves are written only by the controller: the admission
 * policies in manifests/policy refuse anyone else who sets or changes a tx.janus.io/source-*
 * annotation or spec.sourceRef, or creates or changes a Source or its status. Tried as a tenant
 * who may create Transactions in a namespace and act as its ServiceAccount there (and, for
 * Sources, was even given every RBAC right on them), against the shipped manifests and `janus run`.
 */
import { describe, expect, it } from 'vitest';
import type { Source } from '../../../src/api/v1alpha1/index.ts';
import { PatchType } from '../../../src/kube/client.ts';
import { KubeApiError } from '../../../src/kube/errors.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  cmTarget,
  configMap,
  data,
  getTxn,
  grantRole,
  serviceAccount,
  transaction,
  txnRef,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { configMapYaml, createTestRepo, directory, useGitServer, useJanus } from '../gitops/harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'prov');
const git = useGitServer();
const janus = useJanus(clients);

/** What the tenant had: Transactions in her namespace, acting as its deployer. */
async function tenant(namespace: string): Promise<void> {
  await serviceAccount(clients.admin, namespace, 'deployer', [ALL_ON_CONFIGMAPS]);
  await grantRole(
    clients.admin,
    namespace,
    'txn-author',
    [
      {
        apiGroups: ['tx.janus.io'],
        resources: ['transactions'],
        verbs: ['create', 'get', 'list', 'patch', 'update'],
      },
      {
        apiGroups: [''],
        resources: ['serviceaccounts'],
        verbs: ['impersonate'],
        resourceNames: ['deployer'],
      },
    ],
    { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: clients.users.alice },
  );
}

/** The error of a request expected to be refused; the outcome when it was not. */
async function attempt(request: Promise<unknown>): Promise<KubeApiError | 'allowed'> {
  try {
    await request;
    return 'allowed';
  } catch (e) {
    if (e instanceof KubeApiError) return e;
    throw e;
  }
}

const releaseChange = (value: string) => [
  { target: cmTarget('release'), type: 'Patch' as const, content: { data: { v: value } } },
];

describe('provenance is written only by the controller', () => {
  it('refuses a tenant who pre-creates a directory in review with its source annotations; the reviewed content runs', async () => {
    await tenant(ns.name);
    await clients.admin.create(configMap(ns.name, 'release', { v: '1' }));
    const repo = await createTestRepo(git.server);
    await janus.start({ repo: repo.url, namespace: ns.name });

    // The directory transactions/s11-release is in review; the tenant creates its Transaction
    // first, with the annotations the poller would give it, and her own Patch.
    const forged = await attempt(
      clients.alice.create(
        transaction(ns.name, 's11-release', releaseChange('tenant'), {
          annotations: {
            'tx.janus.io/source-repository': repo.url,
            'tx.janus.io/source-path': 'transactions/s11-release',
          },
        }),
      ),
    );
    await repo.push(
      directory('s11-release', {
        changes: { '10-release.patch.yaml': configMapYaml('release', { v: 'reviewed' }) },
      }),
      'the reviewed release',
    );
    const result = await eventually(
      async () => {
        const recorded = await repo.result(ns.name, 's11-release');
        if (recorded?.phase !== 'Committed') throw new Error(`recorded: ${String(recorded?.phase)}`);
        return recorded as { transaction: { uid: string } };
      },
      { timeoutMs: 90_000 },
    );
    // What the results branch reports as applied is what ran: the reviewed content.
    expect(await data(clients.admin, ns.name, 'release')).toEqual({ v: 'reviewed' });
    const txn = await getTxn(clients.admin, ns.name, 's11-release');
    expect(result.transaction.uid).toBe(txn.metadata.uid);
    expect(txn.metadata.annotations?.['tx.janus.io/source-revision']).toMatch(/^main@sha1:/);
    // Because the API server refused the forgery, naming who and what.
    expect(forged).toBeInstanceOf(KubeApiError);
    const error = forged as KubeApiError;
    expect(error.status).toBe(403);
    expect(error.serverMessage).toContain(
      `${clients.users.alice} may not set tx.janus.io/source-path, tx.janus.io/source-repository`,
    );
  });

  it('refuses a forged place in Git order, at create and by update, and still takes the one-shot annotations', async () => {
    await tenant(ns.name);
    await clients.admin.create(configMap(ns.name, 'release', { v: '1' }));
    const repo = await createTestRepo(git.server);
    await janus.start({ repo: repo.url, namespace: ns.name });
    await repo.push(
      directory('from-git', { changes: { '10-release.patch.yaml': configMapYaml('release', { v: 'git' }) } }),
    );
    const fromGit = await waitForPhase(clients.admin, ns.name, 'from-git', 'Committed');
    const sequence = fromGit.metadata.annotations?.['tx.janus.io/source-sequence'];
    expect(sequence).toMatch(/^\d+$/);

    for (const forged of ['0', '9007199254740991']) {
      const created = await attempt(
        clients.alice.create(
          transaction(ns.name, `jump-${forged.length}`, releaseChange('jumped'), {
            annotations: {
              'tx.janus.io/source-repository': repo.url,
              'tx.janus.io/source-sequence': forged,
            },
          }),
        ),
      );
      expect(created, `source-sequence ${forged}`).toBeInstanceOf(KubeApiError);
      expect((created as KubeApiError).serverMessage).toContain(
        `${clients.users.alice} may not set tx.janus.io/source-repository, tx.janus.io/source-sequence`,
      );
    }
    // Moving a Git transaction in Git order, or stripping its provenance, is an update: refused too.
    for (const annotations of [
      { 'tx.janus.io/source-sequence': '424242' },
      { 'tx.janus.io/source-repository': null },
    ]) {
      const patched = await attempt(
        clients.alice.patch(txnRef(ns.name, 'from-git'), { metadata: { annotations } }, PatchType.merge),
      );
      expect(patched, JSON.stringify(annotations)).toBeInstanceOf(KubeApiError);
      expect((patched as KubeApiError).serverMessage).toContain(`${clients.users.alice} may not set`);
    }
    // And giving her own Transaction a provenance afterwards.
    await clients.alice.create(
      transaction(ns.name, 'plain', [
        { target: cmTarget('plain'), type: 'Create', content: { data: { v: 'plain' } } },
      ]),
    );
    const adopted = await attempt(
      clients.alice.patch(
        txnRef(ns.name, 'plain'),
        { metadata: { annotations: { 'tx.janus.io/source-path': 'transactions/plain' } } },
        PatchType.merge,
      ),
    );
    expect(adopted).toBeInstanceOf(KubeApiError);
    // Annotations that are hers to set still pass, on a Git transaction too.
    await clients.alice.patch(
      txnRef(ns.name, 'from-git'),
      { metadata: { annotations: { 'tx.janus.io/request-rollback': 'by the tenant' } } },
      PatchType.merge,
    );
    await waitForPhase(clients.admin, ns.name, 'from-git', 'RolledBack');
    const after = await getTxn(clients.admin, ns.name, 'from-git');
    expect(after.metadata.annotations?.['tx.janus.io/source-sequence']).toBe(sequence);
  });
});

const source = (namespace: string, name: string): Source => ({
  apiVersion: 'tx.janus.io/v1alpha1',
  kind: 'Source',
  metadata: { name, namespace },
  spec: { path: 'deploy/shop', kustomize: {}, serviceAccountName: 'deployer', prune: true },
});

const sourceRef = (namespace: string, name: string) => ({
  apiVersion: 'tx.janus.io/v1alpha1',
  kind: 'Source',
  name,
  namespace,
});

describe("a source's provenance is written only by the controller", () => {
  it("refuses a tenant's Transaction that names a source: its manager would take that source's fields", async () => {
    await tenant(ns.name);
    const apply = [{ target: cmTarget('web'), type: 'Apply' as const, content: { data: { v: 'mine' } } }];
    const stealing = transaction(ns.name, 'steal', apply);
    stealing.spec.sourceRef = { name: 'shop' };
    const refused = await attempt(clients.alice.create(stealing));
    expect(refused).toBeInstanceOf(KubeApiError);
    expect((refused as KubeApiError).status).toBe(403);
    expect((refused as KubeApiError).serverMessage).toContain(
      `${clients.users.alice} may not set spec.sourceRef on Transaction ${ns.name}/steal`,
    );
    // Without it, an Apply of her own (under the transaction's own manager) is hers to make.
    expect(await attempt(clients.alice.create(transaction(ns.name, 'own', apply)))).toBe('allowed');
  });

  it('refuses a tenant with every RBAC right on Sources who creates one or changes one or its status', async () => {
    await tenant(ns.name);
    await grantRole(
      clients.admin,
      ns.name,
      'source-writer',
      [{ apiGroups: ['tx.janus.io'], resources: ['sources', 'sources/status'], verbs: ['*'] }],
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: clients.users.alice },
    );
    const created = await attempt(clients.alice.create(source(ns.name, 'forged')));
    expect(created).toBeInstanceOf(KubeApiError);
    expect((created as KubeApiError).serverMessage).toContain(
      `${clients.users.alice} may not create Source ${ns.name}/forged: Sources are written only by the Janus controller`,
    );

    // The controller, bound only by the shipped RBAC, creates one and writes its status.
    await clients.controller.create(source(ns.name, 'shop'));
    const inventory = [
      { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns.name, name: 'web', digest: 'a'.repeat(64) },
    ];
    await clients.controller.patch(sourceRef(ns.name, 'shop'), { status: { inventory } }, PatchType.merge, {
      subresource: 'status',
    });

    // She may read it, and change neither it nor what it may prune.
    const read = await clients.alice.get<Source>(sourceRef(ns.name, 'shop'));
    expect(read.status?.inventory).toEqual(inventory);
    for (const [what, request] of [
      [
        'spec',
        () =>
          clients.alice.patch(
            sourceRef(ns.name, 'shop'),
            { spec: { serviceAccountName: 'admin' } },
            PatchType.merge,
          ),
      ],
      [
        'status',
        () =>
          clients.alice.patch(
            sourceRef(ns.name, 'shop'),
            { status: { inventory: [{ ...inventory[0], name: 'someone-elses' }] } },
            PatchType.merge,
            { subresource: 'status' },
          ),
      ],
    ] as const) {
      const changed = await attempt(request());
      expect(changed, what).toBeInstanceOf(KubeApiError);
      expect((changed as KubeApiError).serverMessage, what).toContain(
        `${clients.users.alice} may not change Source ${ns.name}/shop`,
      );
    }
    expect((await clients.admin.get<Source>(sourceRef(ns.name, 'shop'))).status?.inventory).toEqual(
      inventory,
    );
  });

  it('lets whoever may view a namespace read its Sources, and nothing more', async () => {
    await clients.admin.create(source(ns.name, 'shop'));
    await clients.admin.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'alice-view', namespace: ns.name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: clients.users.alice }],
    });
    // The aggregation controller folds janus-source-viewer into view shortly after it exists.
    const read = await eventually(() => clients.alice.get<Source>(sourceRef(ns.name, 'shop')));
    expect(read.spec.path).toBe('deploy/shop');
    const deleted = await attempt(clients.alice.delete(sourceRef(ns.name, 'shop')));
    expect((deleted as KubeApiError).status).toBe(403);
  });
});

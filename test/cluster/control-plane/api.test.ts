/**
 * The test control plane is a real, complete-enough Kubernetes for Janus: CRUD, server-side apply,
 * CRDs with CEL validation, RBAC with impersonation, garbage collection, and watches.
 */
import { describe, expect, it } from 'vitest';
import { PatchType } from '../../../src/kube/client.ts';
import { isConflict, isForbidden, isInvalid, isNotFound, KubeApiError } from '../../../src/kube/errors.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { eventually } from '../../support/eventually.ts';

const clients = useClients();
const ns = useNamespace(clients, 'plane');

const configMap = (name: string, data: Record<string, string>, namespace = ns.name): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data,
});

async function rejection(p: Promise<unknown>): Promise<KubeApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof KubeApiError) return e;
    throw e;
  }
  throw new Error('expected the API server to reject the request');
}

describe('CRUD', () => {
  it('creates, reads, replaces with a resourceVersion precondition, and deletes a ConfigMap', async () => {
    const created = await clients.admin.create(configMap('app', { a: '1' }));
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'app', namespace: ns.name };
    expect((await clients.admin.get(ref)).data).toEqual({ a: '1' });

    const replaced = await clients.admin.replace({ ...created, data: { a: '2' } });
    expect(replaced.metadata.resourceVersion).not.toBe(created.metadata.resourceVersion);
    // A stale resourceVersion is refused: the optimistic concurrency the saga relies on.
    expect(isConflict(await rejection(clients.admin.replace({ ...created, data: { a: '3' } })))).toBe(true);

    const stale = await rejection(
      clients.admin.delete(ref, { preconditions: { resourceVersion: created.metadata.resourceVersion } }),
    );
    expect(isConflict(stale)).toBe(true);
    await clients.admin.delete(ref, {
      preconditions: { resourceVersion: replaced.metadata.resourceVersion },
    });
    expect(await clients.admin.find(ref)).toBeUndefined();
  });

  it('stores Secrets, serves Deployments and Leases', async () => {
    await clients.admin.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'creds', namespace: ns.name },
      stringData: { password: 'hunter2' },
    });
    const secret = await clients.admin.get({
      apiVersion: 'v1',
      kind: 'Secret',
      name: 'creds',
      namespace: ns.name,
    });
    expect(Buffer.from((secret.data as Record<string, string>).password ?? '', 'base64').toString()).toBe(
      'hunter2',
    );

    const deployment = await clients.admin.create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: ns.name },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] },
        },
      },
    });
    // Defaulting ran: a real API server, not a store of JSON blobs.
    expect((deployment.spec as { strategy?: { type?: string } }).strategy?.type).toBe('RollingUpdate');

    const lease = await clients.admin.create({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'lock', namespace: ns.name },
      spec: { holderIdentity: 'me', leaseDurationSeconds: 15, renewTime: '2026-01-01T00:00:00.000000Z' },
    });
    expect((lease.spec as { holderIdentity: string }).holderIdentity).toBe('me');
    // Lease times are MicroTime: millisecond precision is rejected, as in every real cluster.
    const invalid = await rejection(
      clients.admin.replace({
        ...lease,
        spec: { ...(lease.spec as object), renewTime: '2026-01-01T00:00:00.000Z' },
      }),
    );
    expect(invalid.status).toBe(400);
  });
});

describe('server-side apply', () => {
  it('records the field manager and refuses a conflicting manager unless forced', async () => {
    const cm = configMap('ssa', { owned: 'by-a' });
    const applied = await clients.admin.apply(cm, { fieldManager: 'manager-a' });
    const managers = (applied.metadata.managedFields as { manager: string; operation: string }[]).map(
      (f) => `${f.manager}/${f.operation}`,
    );
    expect(managers).toContain('manager-a/Apply');

    const conflict = await rejection(
      clients.admin.apply(configMap('ssa', { owned: 'by-b' }), { fieldManager: 'manager-b' }),
    );
    expect(conflict.status).toBe(409);
    expect(conflict.details?.causes?.[0]).toMatchObject({
      reason: 'FieldManagerConflict',
      field: '.data.owned',
    });

    const forced = await clients.admin.apply(configMap('ssa', { owned: 'by-b' }), {
      fieldManager: 'manager-b',
      force: true,
    });
    expect(forced.data).toEqual({ owned: 'by-b' });
  });

  it('treats a resourceVersion in the applied object as a precondition', async () => {
    const first = await clients.admin.apply(configMap('ssa-rv', { k: 'v1' }), { fieldManager: 'janus-x' });
    await clients.admin.apply(configMap('ssa-rv', { k: 'v2' }), { fieldManager: 'janus-x' });
    const stale = {
      ...configMap('ssa-rv', { k: 'v3' }),
      metadata: { name: 'ssa-rv', namespace: ns.name, resourceVersion: first.metadata.resourceVersion ?? '' },
    };
    expect(
      isConflict(await rejection(clients.admin.apply(stale, { fieldManager: 'janus-x', force: true }))),
    ).toBe(true);
  });

  it('dry-runs without persisting, deletes with preconditions included', async () => {
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'dry', namespace: ns.name };
    await clients.admin.create(configMap('dry', { k: 'before' }), { dryRun: true });
    expect(await clients.admin.find(ref)).toBeUndefined();
    const created = await clients.admin.create(configMap('dry', { k: 'before' }));
    await clients.admin.delete(ref, {
      dryRun: true,
      preconditions: { resourceVersion: created.metadata.resourceVersion },
    });
    expect(await clients.admin.find(ref)).toBeDefined();
  });
});

describe('the Transaction CRD', () => {
  const txn = (spec: Record<string, unknown>, name = 'txn') => ({
    apiVersion: 'tx.janus.io/v1alpha1',
    kind: 'Transaction',
    metadata: { name, namespace: ns.name },
    spec,
  });
  const patchChange = (name: string, namespace?: string) => ({
    target: { apiVersion: 'v1', kind: 'ConfigMap', name, ...(namespace && { namespace }) },
    type: 'Patch',
    content: { data: { k: 'v' } },
  });

  it('is served, with defaults filled in by the API server', async () => {
    const created = await clients.admin.create(
      txn({ serviceAccountName: 'deployer', changes: [patchChange('a')] }),
    );
    expect(created.spec).toMatchObject({ lockTimeout: '5m', timeout: '30m' });
  });

  it('rejects invalid objects through CEL rules, naming the field', async () => {
    const deleteWithContent = await rejection(
      clients.admin.create(
        txn({
          serviceAccountName: 'deployer',
          changes: [
            { target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'a' }, type: 'Delete', content: {} },
          ],
        }),
      ),
    );
    expect(isInvalid(deleteWithContent)).toBe(true);
    expect(deleteWithContent.message).toContain('spec.changes[0].content');
    expect(deleteWithContent.message).toContain('content is forbidden for a Delete change');

    const missingContent = await rejection(
      clients.admin.create(
        txn({
          serviceAccountName: 'sa',
          changes: [{ target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'a' }, type: 'Update' }],
        }),
      ),
    );
    expect(missingContent.message).toContain('content is required for a Update change');

    const sopsPatch = await rejection(
      clients.admin.create(
        txn({
          serviceAccountName: 'sa',
          changes: [
            { target: { apiVersion: 'v1', kind: 'Secret', name: 'a' }, type: 'Patch', sopsContent: 'x' },
          ],
        }),
      ),
    );
    expect(sopsPatch.message).toContain('spec.changes[0].sopsContent');
    expect(sopsPatch.message).toContain(
      'sopsContent is for a Create, Update or Apply change, instead of content',
    );
    const sopsAndContent = await rejection(
      clients.admin.create(
        txn({
          serviceAccountName: 'sa',
          changes: [{ ...patchChange('a'), type: 'Update', sopsContent: 'x' }],
        }),
      ),
    );
    expect(sopsAndContent.message).toContain(
      'sopsContent is for a Create, Update or Apply change, instead of content',
    );
    const sopsUpdate = await clients.admin.create(
      txn({
        serviceAccountName: 'sa',
        changes: [
          { target: { apiVersion: 'v1', kind: 'Secret', name: 'a' }, type: 'Update', sopsContent: 'x' },
        ],
      }),
    );
    expect(sopsUpdate.spec).toMatchObject({ changes: [{ sopsContent: 'x' }] });
    await clients.admin.delete({
      apiVersion: 'tx.janus.io/v1alpha1',
      kind: 'Transaction',
      namespace: sopsUpdate.metadata.namespace ?? '',
      name: sopsUpdate.metadata.name,
    });

    const duplicate = await rejection(
      clients.admin.create(txn({ serviceAccountName: 'sa', changes: [patchChange('a'), patchChange('a')] })),
    );
    expect(duplicate.message).toContain('two changes have the same target');

    const badDuration = await rejection(
      clients.admin.create(
        txn({ serviceAccountName: 'sa', lockTimeout: '500ms', changes: [patchChange('a')] }),
      ),
    );
    expect(badDuration.message).toContain('lockTimeout must be at least 1s');

    const bakePastTimeout = await rejection(
      clients.admin.create(
        txn({
          serviceAccountName: 'sa',
          timeout: '1m',
          health: { stableFor: '1m' },
          changes: [patchChange('a')],
        }),
      ),
    );
    expect(bakePastTimeout.message).toContain('spec.health.stableFor');
    expect(bakePastTimeout.message).toContain('health.stableFor must be less than timeout');

    const bakeTooLong = await rejection(
      clients.admin.create(
        txn({
          serviceAccountName: 'sa',
          timeout: '2h',
          health: { stableFor: '61m' },
          changes: [patchChange('a')],
        }),
      ),
    );
    expect(bakeTooLong.message).toContain('health.stableFor must be at most 1h');

    const inline = { check: { name: 'up', http: { url: 'http://web/healthz' } } };
    for (const health of [{ analysis: [inline] }, { stableFor: '0s', analysis: [inline] }]) {
      const analysisWithoutWindow = await rejection(
        clients.admin.create(txn({ serviceAccountName: 'sa', health, changes: [patchChange('a')] })),
      );
      expect(analysisWithoutWindow.message).toContain('spec.health.analysis');
      expect(analysisWithoutWindow.message).toContain('health.analysis needs health.stableFor > 0s');
    }
    const tooManyChecks = await rejection(
      clients.admin.create(
        txn({
          serviceAccountName: 'sa',
          health: { stableFor: '1m', analysis: Array.from({ length: 9 }, () => inline) },
          changes: [patchChange('a')],
        }),
      ),
    );
    expect(tooManyChecks.message).toContain('spec.health.analysis');

    const notADuration = await rejection(
      clients.admin.create(txn({ serviceAccountName: 'sa', timeout: 'soon', changes: [patchChange('a')] })),
    );
    expect(notADuration.message).toContain('spec.timeout');

    const clusterScoped = await rejection(
      clients.admin.create(
        txn({
          serviceAccountName: 'sa',
          changes: [
            { target: { apiVersion: 'v1', kind: 'Namespace', name: 'x', namespace: 'y' }, type: 'Delete' },
          ],
        }),
      ),
    );
    expect(clusterScoped.message).toContain('namespace must not be set for a cluster-scoped kind');

    const longName = await rejection(
      clients.admin.create(txn({ serviceAccountName: 'sa', changes: [patchChange('a')] }, 'x'.repeat(64))),
    );
    expect(longName.message).toContain('DNS-1123 label');
  });

  it('accepts 256 distinct changes, the maximum, and keeps the spec immutable', async () => {
    const changes = Array.from({ length: 256 }, (_, i) => patchChange(`cm-${i}`));
    const created = await clients.admin.create(txn({ serviceAccountName: 'sa', changes }));
    const immutable = await rejection(
      clients.admin.patch(
        {
          apiVersion: 'tx.janus.io/v1alpha1',
          kind: 'Transaction',
          name: created.metadata.name,
          namespace: ns.name,
        },
        { spec: { serviceAccountName: 'someone-else' } },
        PatchType.merge,
      ),
    );
    expect(immutable.message).toContain('spec is immutable');
    // Metadata stays editable (annotations such as request-rollback).
    await clients.admin.patch(
      {
        apiVersion: 'tx.janus.io/v1alpha1',
        kind: 'Transaction',
        name: created.metadata.name,
        namespace: ns.name,
      },
      { metadata: { annotations: { 'tx.janus.io/request-rollback': 'please' } } },
      PatchType.merge,
    );
  });
});

describe('RBAC and impersonation', () => {
  it('denies an unprivileged user, and allows or denies impersonated requests by the impersonated RBAC', async () => {
    const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', namespace: ns.name };
    expect(isForbidden(await rejection(clients.alice.get(ref)))).toBe(true);

    await clients.admin.create({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'deployer', namespace: ns.name },
    });
    await clients.admin.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'configmap-reader', namespace: ns.name },
      rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'] }],
    });
    await clients.admin.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'deployer-reads', namespace: ns.name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'configmap-reader' },
      subjects: [{ kind: 'ServiceAccount', name: 'deployer', namespace: ns.name }],
    });
    await clients.admin.create(configMap('x', { k: 'v' }));

    // The controller may impersonate ServiceAccounts (manifests/rbac), and then has exactly their rights.
    const deployer = clients.controller.as(`system:serviceaccount:${ns.name}:deployer`);
    await eventually(async () => expect((await deployer.get(ref)).data).toEqual({ k: 'v' }));
    expect(isForbidden(await rejection(deployer.delete(ref)))).toBe(true);
    // alice may not impersonate anyone.
    const impostor = await rejection(clients.alice.as(`system:serviceaccount:${ns.name}:deployer`).get(ref));
    expect(isForbidden(impostor)).toBe(true);
    expect(impostor.message).toContain('impersonate');
  });

  it('holds the controller to the RBAC in manifests/', async () => {
    // Allowed: Leases anywhere (locks live in target namespaces).
    await clients.controller.create({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'janus-lock-test', namespace: ns.name },
      spec: {},
    });
    // Reading workloads is allowed (the health gate watches them); changing them under its own
    // identity is not: every write to a target goes through the transaction's ServiceAccount.
    await clients.controller.list('apps/v1', 'Deployment', ns.name);
    const denied = await rejection(
      clients.controller.create({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'sneaky', namespace: ns.name },
        spec: {
          selector: { matchLabels: { app: 'x' } },
          template: { metadata: { labels: { app: 'x' } }, spec: { containers: [{ name: 'x', image: 'x' }] } },
        },
      } as KubeObject),
    );
    expect(isForbidden(denied)).toBe(true);
  });
});

describe('garbage collection', () => {
  it('deletes a ConfigMap whose owner is deleted', async () => {
    const owner = await clients.admin.create(configMap('owner', {}));
    await clients.admin.create({
      ...configMap('dependent', { k: 'v' }),
      metadata: {
        name: 'dependent',
        namespace: ns.name,
        ownerReferences: [
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid ?? '' },
        ],
      },
    });
    await clients.admin.delete({ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', namespace: ns.name });
    await eventually(
      async () => {
        const dependent = clients.admin.get({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: 'dependent',
          namespace: ns.name,
        });
        expect(isNotFound(await rejection(dependent))).toBe(true);
      },
      { timeoutMs: 90_000, intervalMs: 250 },
    );
  });
});

describe('watch', () => {
  it('delivers ADDED, MODIFIED and DELETED events from a resourceVersion', async () => {
    const list = await clients.admin.list('v1', 'ConfigMap', ns.name);
    const abort = new AbortController();
    const seen: string[] = [];
    const path = `/api/v1/namespaces/${ns.name}/configmaps`;
    const watching = (async () => {
      for await (const event of clients.admin.client.watch<KubeObject>(
        path,
        { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true, timeoutSeconds: 60 },
        abort.signal,
      )) {
        if (event.type === 'BOOKMARK') continue;
        seen.push(`${event.type} ${event.object.metadata.name}`);
        if (event.type === 'DELETED') break;
      }
    })();
    const created = await clients.admin.create(configMap('watched', { n: '1' }));
    await clients.admin.replace({ ...created, data: { n: '2' } });
    await clients.admin.delete({ apiVersion: 'v1', kind: 'ConfigMap', name: 'watched', namespace: ns.name });
    await watching;
    abort.abort();
    expect(seen).toEqual(['ADDED watched', 'MODIFIED watched', 'DELETED watched']);
  });
});

/**
 * The fixture of the blocking locks' tests (docs/security.md, "Locks that block"): a namespace
 * that opted in (label tx.janus.io/locks), a Deployment "web" on kwok, a ConfigMap, a Secret and
 * a cluster-scoped ClusterRole for a Transaction to hold; a deployer ServiceAccount that may
 * change them; and alice, who may edit everything in the namespace and that ClusterRole, so the
 * only thing in her way is a lock.
 */

import { afterEach, expect } from 'vitest';
import type { Change, Transaction } from '../../../src/api/v1alpha1/index.ts';
import type { KubeObject, Objects } from '../../../src/kube/resources.ts';
import { eventually } from '../eventually.ts';
import type { TestClients } from './kube.ts';
import { POD_IMAGES } from './pod-images.ts';
import { configMap, getTxn, testNamespace, untilAuthorized } from './saga.ts';
import { newImage } from './web-shop.ts';
import { availableWith, deployment } from './workloads.ts';

export type LocksMode = 'Deny' | 'Warn' | 'Audit';

export interface LockedShop {
  namespace: string;
  /** The cluster-scoped target, a ClusterRole without rules. */
  clusterRole: string;
}

const rbac = 'rbac.authorization.k8s.io';

/** Lets `user` get, patch, update and delete the ClusterRole `target`, cluster-wide. */
async function clusterRoleWriter(admin: Objects, name: string, target: string, subject: object) {
  await admin.create({
    apiVersion: `${rbac}/v1`,
    kind: 'ClusterRole',
    metadata: { name },
    rules: [
      {
        apiGroups: [rbac],
        resources: ['clusterroles'],
        verbs: ['get', 'patch', 'update', 'delete'],
        resourceNames: [target],
      },
    ],
  });
  await admin.create({
    apiVersion: `${rbac}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: rbac, kind: 'ClusterRole', name },
    subjects: [subject],
  });
}

/** The shop, with the namespace labelled `mode` (none: not opted in). */
async function lockedShop(
  clients: TestClients,
  prefix: string,
  mode: LocksMode | undefined,
): Promise<LockedShop> {
  const { admin } = clients;
  const namespace = await testNamespace(admin, prefix, {
    deployer: [
      { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] },
      { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['*'] },
    ],
    ...(mode && { labels: { 'tx.janus.io/locks': mode } }),
  });
  const clusterRole = `${namespace}-settings`;
  await admin.create({
    apiVersion: `${rbac}/v1`,
    kind: 'ClusterRole',
    metadata: { name: clusterRole },
    rules: [],
  });
  await clusterRoleWriter(admin, `${clusterRole}-deployer`, clusterRole, {
    kind: 'ServiceAccount',
    name: 'deployer',
    namespace,
  });
  await clusterRoleWriter(admin, `${clusterRole}-alice`, clusterRole, {
    kind: 'User',
    name: clients.users.alice,
    apiGroup: rbac,
  });
  await admin.create({
    apiVersion: `${rbac}/v1`,
    kind: 'RoleBinding',
    metadata: { name: 'alice-edit', namespace },
    roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'edit' },
    subjects: [{ kind: 'User', name: clients.users.alice, apiGroup: rbac }],
  });
  await untilAuthorized(admin, namespace, clients.users.alice, {
    apiGroups: ['apps'],
    resources: ['deployments/scale'],
    verbs: ['patch'],
  });
  await admin.create(deployment(namespace, 'web', POD_IMAGES.ready));
  await admin.create(configMap(namespace, 'app-config', { version: 'v1' }));
  await admin.create(configMap(namespace, 'old-config', { version: 'v0' }));
  await admin.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'app-secret', namespace },
    stringData: { token: 'v1' },
  } as KubeObject);
  await availableWith(admin, namespace, 'web', POD_IMAGES.ready);
  return { namespace, clusterRole };
}

/** lockedShop for a test file: each shop's cluster-scoped objects are removed after its test. */
export function useLockedShops(
  clients: TestClients,
): (prefix: string, mode: LocksMode | undefined) => Promise<LockedShop> {
  const shops: LockedShop[] = [];
  afterEach(async () => {
    for (const shop of shops.splice(0)) {
      for (const name of [shop.clusterRole, `${shop.clusterRole}-deployer`, `${shop.clusterRole}-alice`]) {
        await clients.admin
          .delete({ apiVersion: `${rbac}/v1`, kind: 'ClusterRoleBinding', name })
          .catch(() => {});
        await clients.admin.delete({ apiVersion: `${rbac}/v1`, kind: 'ClusterRole', name }).catch(() => {});
      }
    }
  });
  return async (prefix, mode) => {
    const shop = await lockedShop(clients, prefix, mode);
    shops.push(shop);
    return shop;
  };
}

/** Waits until the Transaction's bake window is open: Verifying, stableSince recorded. */
export function inBakeWindow(admin: Objects, ns: string, name: string): Promise<Transaction> {
  return eventually(
    async () => {
      const txn = await getTxn(admin, ns, name);
      expect(txn.status?.phase).toBe('Verifying');
      expect(txn.status?.health?.stableSince).toBeDefined();
      return txn;
    },
    { timeoutMs: 120_000, intervalMs: 100 },
  );
}

/** A change of every target: the Deployment's image, the ConfigMap, the Secret, the ClusterRole; old-config deleted. */
export function shopChanges(shop: LockedShop, image: string = POD_IMAGES.readyAlternative): Change[] {
  return [
    newImage(image),
    {
      target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'app-config' },
      type: 'Patch',
      content: { data: { version: 'v2' } },
    },
    {
      target: { apiVersion: 'v1', kind: 'Secret', name: 'app-secret' },
      type: 'Patch',
      content: { stringData: { token: 'v2' } },
    },
    {
      target: { apiVersion: `${rbac}/v1`, kind: 'ClusterRole', name: shop.clusterRole },
      type: 'Patch',
      content: { metadata: { annotations: { 'shop.example/version': 'v2' } } },
    },
    { target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'old-config' }, type: 'Delete' },
  ];
}

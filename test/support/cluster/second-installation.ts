/**
 * A second installation of Janus, as its operator would set one up in a namespace of its own: the
 * ServiceAccount janus-controller there, bound to the shipped ClusterRole janus-controller and to
 * the shipped Role's rules in its namespace (manifests/rbac/), and a kubeconfig with a token of
 * that ServiceAccount (TokenRequest). Its controller runs as that identity, nothing more.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfigYaml } from '../../../src/cli/demo/control-plane.ts';
import { readManifests } from '../../../src/cli/demo/manifests.ts';
import { loadKubeConfig } from '../../../src/kube/connection.ts';
import type { KubeObject, Objects } from '../../../src/kube/resources.ts';
import { REPO_ROOT } from './manifests.ts';

export interface SecondInstallation {
  /** Its controller namespace. */
  namespace: string;
  /** system:serviceaccount:<namespace>:janus-controller */
  user: string;
  kubeconfig: string;
}

export async function secondInstallation(
  admin: Objects,
  adminKubeconfig: string,
  prefix = 'janus-second',
): Promise<SecondInstallation> {
  const namespace = `${prefix}-${randomBytes(3).toString('hex')}`;
  const account = { kind: 'ServiceAccount', name: 'janus-controller', namespace };
  await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  await admin.create({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: account.name, namespace },
  });
  const [role] = await readManifests(join(REPO_ROOT, 'manifests/rbac/role.yaml'));
  if (!role) throw new Error('manifests/rbac/role.yaml holds no Role');
  await admin.create({ ...role, metadata: { name: 'janus-controller', namespace } } as KubeObject);
  const rbac = 'rbac.authorization.k8s.io';
  await admin.create({
    apiVersion: `${rbac}/v1`,
    kind: 'RoleBinding',
    metadata: { name: 'janus-controller', namespace },
    roleRef: { apiGroup: rbac, kind: 'Role', name: 'janus-controller' },
    subjects: [account],
  } as KubeObject);
  await admin.create({
    apiVersion: `${rbac}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name: `janus-controller-${namespace}` },
    roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'janus-controller' },
    subjects: [account],
  } as KubeObject);
  const { status } = await admin.client.request<{ status: { token: string } }>({
    method: 'POST',
    path: `/api/v1/namespaces/${namespace}/serviceaccounts/${account.name}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const server = admin.client.connection.server.toString().replace(/\/$/, '');
  const caData = loadKubeConfig({ kubeconfig: adminKubeconfig }).cluster?.caData ?? '';
  const kubeconfig = join(await mkdtemp(join(tmpdir(), 'janus-second-')), 'kubeconfig');
  await writeFile(kubeconfig, kubeconfigYaml(server, caData, namespace, status.token), { mode: 0o600 });
  return { namespace, user: `system:serviceaccount:${namespace}:${account.name}`, kubeconfig };
}

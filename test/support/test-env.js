import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeClient } from '../../src/kube/client.js';
import { loadKubeConfig } from '../../src/kube/connection.js';
import { Discovery, Objects } from '../../src/kube/resources.js';
import { buildControlPlane, IDENTITIES, kubeconfigYaml, startControlPlane } from './control-plane.js';
import { applyManifests, REPO_ROOT, readManifests } from './manifests.js';
export const CONTROLLER_NAMESPACE = 'janus-system';
export const CONTROLLER_SERVICE_ACCOUNT = 'janus-controller';
export async function startTestEnvironment() {
  const external = process.env.JANUS_TEST_KUBECONFIG;
  return external ? useExistingCluster(external) : startLocal();
}
async function installControllerManifests(admin) {
  await applyManifests(new Objects(admin, new Discovery(admin)), await controllerManifests());
}
export function controllerManifests() {
  return readManifests(
    join(REPO_ROOT, 'manifests/namespace.yaml'),
    join(REPO_ROOT, 'manifests/crd/transactions.tx.janus.io.yaml'),
    ...[
      'service-account',
      'cluster-role',
      'cluster-role-binding',
      'role',
      'role-binding',
      'tenant-cluster-role',
    ].map((file) => join(REPO_ROOT, `manifests/rbac/${file}.yaml`)),
    join(REPO_ROOT, 'manifests/policy/transaction-service-account.yaml'),
  );
}
async function startLocal() {
  const binDir = buildControlPlane();
  const plane = await startControlPlane({ binDir });
  try {
    const admin = await KubeClient.load({ kubeconfig: plane.kubeconfigs.admin });
    await installControllerManifests(admin);
    await admin.connection.close();
  } catch (e) {
    await plane.stop();
    throw e;
  }
  const users = Object.fromEntries(Object.entries(IDENTITIES).map(([id, { user }]) => [id, user]));
  return {
    info: { kubeconfigs: plane.kubeconfigs, users, local: true, binDir },
    pids: plane.pids,
    stop: () => plane.stop(),
  };
}
async function useExistingCluster(adminKubeconfig) {
  const dir = await mkdtemp(join(tmpdir(), 'janus-kube-'));
  const admin = await KubeClient.load({ kubeconfig: adminKubeconfig });
  await installControllerManifests(admin);
  const aliceNamespace = 'janus-test-users';
  await applyManifests(new Objects(admin, new Discovery(admin)), [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: aliceNamespace } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'alice', namespace: aliceNamespace } },
  ]);
  const server = admin.connection.server.toString().replace(/\/$/, '');
  const caData = loadKubeConfig({ kubeconfig: adminKubeconfig }).cluster?.caData ?? '';
  const token = async (namespace, name) => {
    const res = await admin.request({
      method: 'POST',
      path: `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`,
      body: {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 86400 },
      },
    });
    return res.status.token;
  };
  const kubeconfigs = {
    admin: adminKubeconfig,
    controller: join(dir, 'controller.kubeconfig'),
    alice: join(dir, 'alice.kubeconfig'),
  };
  await writeFile(
    kubeconfigs.controller,
    kubeconfigYaml(
      server,
      caData,
      'controller',
      await token(CONTROLLER_NAMESPACE, CONTROLLER_SERVICE_ACCOUNT),
    ),
  );
  await writeFile(
    kubeconfigs.alice,
    kubeconfigYaml(server, caData, 'alice', await token(aliceNamespace, 'alice')),
  );
  await admin.connection.close();
  const users = {
    admin: '(from JANUS_TEST_KUBECONFIG)',
    controller: `system:serviceaccount:${CONTROLLER_NAMESPACE}:${CONTROLLER_SERVICE_ACCOUNT}`,
    alice: `system:serviceaccount:${aliceNamespace}:alice`,
  };
  return {
    info: { kubeconfigs, users, local: false, binDir: undefined },
    pids: [],
    stop: () => rm(dir, { recursive: true, force: true }),
  };
}

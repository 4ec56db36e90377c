/**
 * The cluster an integration run uses: a local control plane started for the run, or, when
 * JANUS_TEST_KUBECONFIG is set, an existing cluster (kind, k3d, a real one) reached with that
 * kubeconfig's credentials, which must be cluster-admin. Either way the CRD and the controller's
 * RBAC from manifests/ are installed, and each identity gets its own kubeconfig.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  IDENTITIES,
  type Identity,
  kubeconfigYaml,
  startControlPlane,
} from '../../../src/cli/demo/control-plane.ts';
import { buildControlPlane } from '../../../src/cli/demo/control-plane-binaries.ts';
import { applyManifests, controllerManifests } from '../../../src/cli/demo/manifests.ts';
import { KubeClient } from '../../../src/kube/client.ts';
import { loadKubeConfig } from '../../../src/kube/connection.ts';
import { Discovery, Objects } from '../../../src/kube/resources.ts';

export interface KubeTestInfo {
  /** Path of a kubeconfig per identity. */
  kubeconfigs: Record<Identity, string>;
  /** The user name the API server sees for each identity. */
  users: Record<Identity, string>;
  /** True when running against a control plane started for this run. */
  local: boolean;
  /** Folder holding etcd, kube-apiserver and kube-controller-manager (local runs only). */
  binDir: string | undefined;
}

export interface TestEnvironment {
  info: KubeTestInfo;
  /** PIDs of etcd, kube-apiserver and kube-controller-manager (local runs only; for benchmarks). */
  pids: number[];
  stop(): Promise<void>;
}

export const CONTROLLER_NAMESPACE = 'janus-system';
export const CONTROLLER_SERVICE_ACCOUNT = 'janus-controller';

export async function startTestEnvironment(): Promise<TestEnvironment> {
  const external = process.env.JANUS_TEST_KUBECONFIG;
  return external ? useExistingCluster(external) : startLocal();
}

async function installControllerManifests(admin: KubeClient): Promise<void> {
  await applyManifests(new Objects(admin, new Discovery(admin)), await controllerManifests());
}

async function startLocal(): Promise<TestEnvironment> {
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
  const users = Object.fromEntries(Object.entries(IDENTITIES).map(([id, { user }]) => [id, user])) as Record<
    Identity,
    string
  >;
  return {
    info: { kubeconfigs: plane.kubeconfigs, users, local: true, binDir },
    pids: plane.pids,
    stop: () => plane.stop(),
  };
}

/**
 * On an existing cluster the controller and alice are ServiceAccounts with tokens from the
 * TokenRequest API: the controller's is bound by manifests/ RBAC, alice's by nothing.
 */
async function useExistingCluster(adminKubeconfig: string): Promise<TestEnvironment> {
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
  const token = async (namespace: string, name: string) => {
    const res = await admin.request<{ status: { token: string } }>({
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

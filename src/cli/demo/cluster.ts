/**
 * The demo's cluster: a local control plane (the one the integration tests use, control-plane.ts),
 * or an existing cluster given with --kubeconfig. Either way Janus's CRD and controller RBAC are
 * installed, and the main job runs with the controller's own least-privileged identity.
 */
import { existsSync } from 'node:fs';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { KubeClient } from '../../kube/client.ts';
import { loadKubeConfig } from '../../kube/connection.ts';
import { CORE_MAPPINGS, Discovery, Objects } from '../../kube/resources.ts';
import { locateBuild, onPath } from './built-tools.ts';
import type { Cleanup } from './cleanup.ts';
import { KWOK_STAGES, startControlPlane } from './control-plane.ts';
import { buildControlPlane, CONTROL_PLANE, REPO_ROOT } from './control-plane-binaries.ts';
import { applyManifests, controllerManifests, readManifests } from './manifests.ts';
import type { Narrator } from './progress.ts';
import { findKubectl } from './refused-edit.ts';
import { RENDER_TOOLS } from './render-tools.ts';

export { REPO_ROOT };
export const EXAMPLES = join(REPO_ROOT, 'examples');
/** What runs in the shop before the transaction story's first commit. */
const WORKLOADS_FILE = '20-workloads.yaml';

export interface DemoCluster {
  adminKubeconfig: string;
  /** The Janus controller's identity: only the RBAC in manifests/rbac. */
  controllerKubeconfig: string;
  server: string;
  /** kubectl, for the person's edit the demo shows refused; undefined when there is none. */
  kubectl: string | undefined;
}

/**
 * Why the demo cannot run from here, if it cannot: it needs a checkout of Janus (examples/,
 * manifests/), git, for a local cluster the control plane's binaries, and for the sources story
 * kustomize and helm (or Go to build them).
 */
export function prerequisiteProblems(localCluster: boolean, sources: boolean): string[] {
  const problems: string[] = [];
  const needed = [EXAMPLES, join(REPO_ROOT, 'manifests'), ...(localCluster ? [KWOK_STAGES] : [])];
  if (!needed.every((path) => existsSync(path))) {
    problems.push(
      `janus demo runs from a source checkout of Janus (it needs examples/, manifests/ and src/cli/demo/kwok-stages.yaml under ${REPO_ROOT})`,
    );
  }
  if (!onPath('git', ['--version'])) problems.push('git is not installed (or not on PATH)');
  for (const build of [...(localCluster ? [CONTROL_PLANE] : []), ...(sources ? [RENDER_TOOLS] : [])]) {
    const source = locateBuild(build);
    if ('missing' in source) problems.push(source.missing);
  }
  return problems;
}

export async function startLocalCluster(narrator: Narrator, cleanup: Cleanup): Promise<DemoCluster> {
  const source = locateBuild(CONTROL_PLANE);
  if ('missing' in source) throw new Error(source.missing);
  let binDir: string;
  if (source.build) {
    narrator.step(
      'Building the local Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok) from source.',
    );
    narrator.detail('The first time this takes 5-10 minutes; afterwards it is cached (~/.cache/janus).');
    binDir = buildControlPlane();
  } else {
    narrator.step(
      'Using the local Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok) built earlier.',
    );
    narrator.detail(
      `${source.binDir} (built by test/kube-testenv/build.sh; no Go here to check it is current)`,
    );
    binDir = source.binDir;
  }
  narrator.step(
    'Starting it on 127.0.0.1: a real API server with RBAC, and two nodes simulated by kwok (pods are scheduled and report Ready, no container runs).',
  );
  const plane = await startControlPlane({ binDir });
  cleanup.add('Stopping the control plane and deleting its data', () => plane.stop());
  narrator.detail(`API server: ${plane.server}`);
  return {
    adminKubeconfig: plane.kubeconfigs.admin,
    controllerKubeconfig: plane.kubeconfigs.controller,
    server: plane.server,
    kubectl: findKubectl(binDir),
  };
}

/**
 * An existing cluster (cluster-admin kubeconfig): the controller gets a token for its
 * ServiceAccount janus-system/janus-controller from the TokenRequest API, once it exists.
 */
export function existingCluster(adminKubeconfig: string, workDir: string): DemoCluster {
  const server = loadKubeConfig({ kubeconfig: adminKubeconfig }).cluster?.server ?? '';
  return {
    adminKubeconfig,
    controllerKubeconfig: join(workDir, 'controller.kubeconfig'),
    server,
    kubectl: findKubectl(undefined),
  };
}

/** Installs the CRD, the janus-system namespace and the controller's RBAC, as manifests/ defines them. */
export async function installJanus(cluster: DemoCluster, workDir: string): Promise<void> {
  const admin = await adminObjects(cluster.adminKubeconfig);
  try {
    await applyManifests(admin, await controllerManifests());
    if (!existsSync(cluster.controllerKubeconfig)) {
      await writeControllerKubeconfig(admin.client, cluster, workDir);
    }
  } finally {
    await admin.client.connection.close();
  }
}

/**
 * Applies examples/setup/*.yaml: the shop namespace, the deployer ServiceAccount, and unless
 * `workloads` is false its workloads (20-workloads.yaml; a Source creates its own).
 */
export async function installExampleShop(cluster: DemoCluster, opts: { workloads: boolean }): Promise<void> {
  const setup = join(EXAMPLES, 'setup');
  const files = (await readdir(setup))
    .filter((f) => f.endsWith('.yaml') && (opts.workloads || f !== WORKLOADS_FILE))
    .sort();
  const admin = await adminObjects(cluster.adminKubeconfig);
  try {
    await applyManifests(admin, await readManifests(...files.map((f) => join(setup, f))));
  } finally {
    await admin.client.connection.close();
  }
}

export async function adminObjects(kubeconfig: string): Promise<Objects> {
  const client = await KubeClient.load({ kubeconfig, userAgent: 'janus-demo' });
  const discovery = new Discovery(client);
  for (const mapping of CORE_MAPPINGS) discovery.seed(mapping);
  return new Objects(client, discovery);
}

/** A kubeconfig for the controller's ServiceAccount: the admin's cluster entry, a bound token. */
async function writeControllerKubeconfig(
  admin: KubeClient,
  cluster: DemoCluster,
  workDir: string,
): Promise<void> {
  const { status } = await admin.request<{ status: { token: string } }>({
    method: 'POST',
    path: '/api/v1/namespaces/janus-system/serviceaccounts/janus-controller/token',
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
  });
  const current = loadKubeConfig({ kubeconfig: cluster.adminKubeconfig }).cluster;
  const clusterEntry = {
    server: cluster.server,
    ...(current?.caData && { 'certificate-authority-data': current.caData }),
    ...(current?.caFile && { 'certificate-authority': current.caFile }),
    ...(current?.skipTLSVerify && { 'insecure-skip-tls-verify': true }),
  };
  const kubeconfig = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'demo', cluster: clusterEntry }],
    users: [{ name: 'janus-controller', user: { token: status.token } }],
    contexts: [{ name: 'janus-controller', context: { cluster: 'demo', user: 'janus-controller' } }],
    'current-context': 'janus-controller',
  };
  await writeFile(join(workDir, 'controller.kubeconfig'), stringify(kubeconfig), { mode: 0o600 });
}

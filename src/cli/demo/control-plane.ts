/**
 * Starts a real Kubernetes control plane on this machine, for the demo and the integration tests: etcd, kube-apiserver (RBAC on, static-token
 * authentication), kube-controller-manager (garbage collector, namespace, workload and
 * node-lifecycle controllers), kube-scheduler, and kwok, the SIG simulator that plays the nodes
 * and their pods' lifecycles (kwok-stages.yaml next to this file: a manifest picks how a pod
 * behaves by its image tag), from the binaries control-plane-binaries.ts finds. Everything
 * listens on 127.0.0.1 on free ports and lives in one temporary directory; stop() ends every
 * process it started, and a watchdog ends them too if the process that started them dies without
 * stopping them.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { REPO_ROOT } from './control-plane-binaries.ts';
import { freePorts, startWatchdog, terminate, waitFor } from './control-plane-processes.ts';
import { loopbackRequest } from './loopback-http.ts';

/**
 * kwok's stages: how the simulated nodes and pods behave. Read from the source tree (tsc does not
 * copy it into dist/), which the demo needs anyway for examples/ and manifests/.
 */
export const KWOK_STAGES = join(REPO_ROOT, 'src/cli/demo/kwok-stages.yaml');

/** The identities every test run has, each with its own kubeconfig. */
export const IDENTITIES = {
  /** Cluster admin (system:masters): test fixtures only. */
  admin: { user: 'janus-test-admin', groups: ['system:masters'] },
  /** The controller, bound only by the RBAC in manifests/ (it is named like the ServiceAccount there). */
  controller: {
    user: 'system:serviceaccount:janus-system:janus-controller',
    groups: ['system:serviceaccounts', 'system:serviceaccounts:janus-system'],
  },
  /** A user with no permissions at all (the tests' unprivileged caller; the demo has no use for it). */
  alice: { user: 'alice', groups: [] as string[] },
} as const;

export type Identity = keyof typeof IDENTITIES;

/**
 * The controller manager's own identity, bound by the API server's bootstrap RBAC. With
 * --use-service-account-credentials each controller then acts as a ServiceAccount of its own in
 * kube-system (system:serviceaccount:kube-system:deployment-controller, …), as on kubeadm and
 * managed clusters: what the lock policy (manifests/policy/locks.yaml) lets through.
 */
const CONTROLLER_MANAGER_USER = 'system:kube-controller-manager';

export interface ControlPlane {
  readonly server: string;
  readonly caData: string;
  readonly dir: string;
  /** Path of a kubeconfig per identity. */
  readonly kubeconfigs: Record<Identity, string>;
  readonly tokens: Record<Identity, string>;
  /** PIDs of etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok. */
  readonly pids: number[];
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Folder holding the binaries build.sh builds. */
  binDir: string;
  /** Seconds to wait for readiness. */
  readyTimeoutSeconds?: number;
}

export async function startControlPlane(opts: StartOptions): Promise<ControlPlane> {
  const dir = await mkdtemp(join(tmpdir(), 'janus-kube-'));
  const children: ChildProcess[] = [];
  const watchdog = startWatchdog(dir);
  const stop = async () => {
    // Reverse start order: controller-manager, apiserver, etcd.
    for (const child of [...children].reverse()) await terminate(child);
    watchdog.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const [etcdPort, etcdPeerPort, apiPort] = await freePorts(3);
    const tokens = {
      admin: randomBytes(24).toString('hex'),
      controller: randomBytes(24).toString('hex'),
      alice: randomBytes(24).toString('hex'),
    } satisfies Record<Identity, string>;
    const controllerManagerToken = randomBytes(24).toString('hex');
    await writeFile(
      join(dir, 'tokens.csv'),
      [
        ...Object.entries(IDENTITIES).map(
          ([id, { user, groups }]) => `${tokens[id as Identity]},${user},uid-${id},"${groups.join(',')}"`,
        ),
        `${controllerManagerToken},${CONTROLLER_MANAGER_USER},uid-controller-manager,""`,
      ].join('\n'),
    );
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    await writeFile(join(dir, 'sa.key'), privateKey, { mode: 0o600 });
    await mkdir(join(dir, 'etcd'), { mode: 0o700 });

    const launch = (name: string, args: string[]) => {
      const child = spawn(join(opts.binDir, name), args, { stdio: ['ignore', 'pipe', 'pipe'] });
      const log = createWriteStream(join(dir, `${name}.log`));
      child.stdout?.pipe(log);
      child.stderr?.pipe(log);
      children.push(child);
      watchdog.stdin?.write(`${child.pid}\n`);
      return child;
    };
    const deadline = Date.now() + (opts.readyTimeoutSeconds ?? 120) * 1000;

    const etcd = launch('etcd', [
      '--name=janus-test',
      `--data-dir=${join(dir, 'etcd')}`,
      `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
      `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
      `--listen-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeerPort}`,
      `--initial-cluster=janus-test=http://127.0.0.1:${etcdPeerPort}`,
      '--unsafe-no-fsync=true',
      '--log-level=warn',
    ]);
    await waitFor('etcd', etcd, dir, deadline, async () => {
      const res = await loopbackRequest(`http://127.0.0.1:${etcdPort}/health`);
      return res.status === 200 && res.text.includes('"true"');
    });

    const apiserver = launch('kube-apiserver', [
      `--etcd-servers=http://127.0.0.1:${etcdPort}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${apiPort}`,
      '--advertise-address=127.0.0.1',
      '--endpoint-reconciler-type=none',
      `--cert-dir=${join(dir, 'pki')}`,
      '--service-cluster-ip-range=10.0.0.0/24',
      '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
      `--service-account-key-file=${join(dir, 'sa.key')}`,
      `--service-account-signing-key-file=${join(dir, 'sa.key')}`,
      '--authorization-mode=RBAC',
      `--token-auth-file=${join(dir, 'tokens.csv')}`,
      '--disable-admission-plugins=ServiceAccount',
      '--allow-privileged=true',
      '--profiling=false',
    ]);
    const server = `https://127.0.0.1:${apiPort}`;
    await waitFor('kube-apiserver', apiserver, dir, deadline, async () => {
      const auth = { ca: await readFile(join(dir, 'pki/apiserver.crt'), 'utf8'), token: tokens.admin };
      const ready = await loopbackRequest(`${server}/readyz`, auth);
      if (ready.status !== 200) return false;
      // The bootstrap controller creates the default namespace shortly after /readyz.
      return (await loopbackRequest(`${server}/api/v1/namespaces/default`, auth)).status === 200;
    });

    const caData = Buffer.from(await readFile(join(dir, 'pki/apiserver.crt'))).toString('base64');
    const kubeconfigs = {} as Record<Identity, string>;
    for (const id of Object.keys(IDENTITIES) as Identity[]) {
      kubeconfigs[id] = join(dir, `${id}.kubeconfig`);
      await writeFile(kubeconfigs[id], kubeconfigYaml(server, caData, id, tokens[id]), { mode: 0o600 });
    }

    const controllerManagerKubeconfig = join(dir, 'controller-manager.kubeconfig');
    await writeFile(
      controllerManagerKubeconfig,
      kubeconfigYaml(server, caData, 'controller-manager', controllerManagerToken),
      { mode: 0o600 },
    );
    launch('kube-controller-manager', [
      `--kubeconfig=${controllerManagerKubeconfig}`,
      '--use-service-account-credentials=true',
      `--controllers=${CONTROLLERS.join(',')}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      '--secure-port=0',
      '--concurrent-gc-syncs=5',
    ]);
    await startWorkloads(launch, kubeconfigs.admin, server, tokens.admin, dir);
    const pids = children.map((c) => c.pid).filter((pid): pid is number => pid !== undefined);
    return { server, caData, dir, kubeconfigs, tokens, pids, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

/**
 * The controllers the tests' workloads need, and nothing else: the node-lifecycle controller lifts
 * the not-ready taint a new node gets, the workload controllers turn Deployments, StatefulSets,
 * DaemonSets and Jobs into pods, and the ClusterRole aggregation controller fills the built-in
 * `view`, `edit` and `admin` roles (tests act as a user bound to them).
 */
const CONTROLLERS = [
  'clusterrole-aggregation-controller',
  'garbage-collector-controller',
  'namespace-controller',
  'deployment-controller',
  'replicaset-controller',
  'statefulset-controller',
  'daemonset-controller',
  'job-controller',
  'node-lifecycle-controller',
];

/** Simulated nodes: enough room for every test's pods, no taints. */
const NODES = ['kwok-node-0', 'kwok-node-1'];

type Launch = (name: string, args: string[]) => ChildProcess;

/**
 * kube-scheduler places pods on the simulated nodes; kwok plays the nodes (heartbeats, status)
 * and the pods on them, by the stages in kwok-stages.yaml.
 */
async function startWorkloads(
  launch: Launch,
  kubeconfig: string,
  server: string,
  token: string,
  dir: string,
): Promise<void> {
  launch('kube-scheduler', [
    `--kubeconfig=${kubeconfig}`,
    `--authentication-kubeconfig=${kubeconfig}`,
    `--authorization-kubeconfig=${kubeconfig}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    '--secure-port=0',
  ]);
  launch('kwok', [
    `--kubeconfig=${kubeconfig}`,
    `--config=${KWOK_STAGES}`,
    '--manage-all-nodes=false',
    '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
    '--cidr=10.244.0.0/16',
    '--node-ip=127.0.0.1',
    // Heartbeats (Lease renewals) keep a node Ready for the node-lifecycle controller; every
    // 40 s / 4 is plenty and keeps kwok's load on the API server low.
    '--node-lease-duration-seconds=40',
    '--v=WARN',
  ]);
  const ca = await readFile(join(dir, 'pki/apiserver.crt'), 'utf8');
  for (const name of NODES) {
    const res = await loopbackRequest(`${server}/api/v1/nodes`, {
      method: 'POST',
      ca,
      token,
      body: fakeNode(name),
    });
    if (res.status !== 201) throw new Error(`creating node ${name}: HTTP ${res.status} ${res.text}`);
  }
}

function fakeNode(name: string) {
  const resources = { cpu: '32', memory: '256Gi', pods: '110' };
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: { type: 'kwok', 'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux' },
    },
    spec: {},
    status: { allocatable: resources, capacity: resources },
  };
}

/** A kubeconfig for one token user; with no CA data, TLS is not verified (plain HTTP on loopback). */
export function kubeconfigYaml(server: string, caData: string, user: string, token: string): string {
  const cluster = caData
    ? { server, 'certificate-authority-data': caData }
    : { server, 'insecure-skip-tls-verify': true };
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'janus-test', cluster }],
    users: [{ name: user, user: { token } }],
    contexts: [{ name: user, context: { cluster: 'janus-test', user } }],
    'current-context': user,
  });
}

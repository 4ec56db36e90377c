import { execFileSync, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { stringify } from 'yaml';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '../..');
export const IDENTITIES = {
  admin: { user: 'janus-test-admin', groups: ['system:masters'] },
  controller: {
    user: 'system:serviceaccount:janus-system:janus-controller',
    groups: ['system:serviceaccounts', 'system:serviceaccounts:janus-system'],
  },
  alice: { user: 'alice', groups: [] },
};
export function buildControlPlane() {
  const out = execFileSync('bash', [join(repoRoot, 'test/kube-testenv/build.sh')], {
    stdio: ['ignore', 'pipe', 'inherit'],
    encoding: 'utf8',
  });
  return out.trim().split('\n').pop() ?? '';
}
export async function startControlPlane(opts) {
  const dir = await mkdtemp(join(tmpdir(), 'janus-kube-'));
  const children = [];
  const watchdog = startWatchdog(dir);
  const stop = async () => {
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
    };
    await writeFile(
      join(dir, 'tokens.csv'),
      Object.entries(IDENTITIES)
        .map(([id, { user, groups }]) => `${tokens[id]},${user},uid-${id},"${groups.join(',')}"`)
        .join('\n'),
    );
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    await writeFile(join(dir, 'sa.key'), privateKey, { mode: 0o600 });
    await mkdir(join(dir, 'etcd'), { mode: 0o700 });
    const launch = (name, args) => {
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
      const res = await request(`http://127.0.0.1:${etcdPort}/health`);
      return res.statusCode === 200 && (await res.body.text()).includes('"true"');
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
    let tls;
    const server = `https://127.0.0.1:${apiPort}`;
    await waitFor('kube-apiserver', apiserver, dir, deadline, async () => {
      tls ??= new Agent({ connect: { ca: await readFile(join(dir, 'pki/apiserver.crt'), 'utf8') } });
      const headers = { authorization: `Bearer ${tokens.admin}` };
      const ready = await request(`${server}/readyz`, { dispatcher: tls, headers });
      await ready.body.dump();
      if (ready.statusCode !== 200) return false;
      const ns = await request(`${server}/api/v1/namespaces/default`, { dispatcher: tls, headers });
      await ns.body.dump();
      return ns.statusCode === 200;
    });
    await tls?.close();
    const caData = Buffer.from(await readFile(join(dir, 'pki/apiserver.crt'))).toString('base64');
    const kubeconfigs = {};
    for (const id of Object.keys(IDENTITIES)) {
      kubeconfigs[id] = join(dir, `${id}.kubeconfig`);
      await writeFile(kubeconfigs[id], kubeconfigYaml(server, caData, id, tokens[id]), { mode: 0o600 });
    }
    launch('kube-controller-manager', [
      `--kubeconfig=${kubeconfigs.admin}`,
      `--controllers=${CONTROLLERS.join(',')}`,
      '--leader-elect=false',
      '--bind-address=127.0.0.1',
      '--secure-port=0',
      '--concurrent-gc-syncs=5',
    ]);
    await startWorkloads(launch, kubeconfigs.admin, server, tokens.admin, dir);
    const pids = children.map((c) => c.pid).filter((pid) => pid !== undefined);
    return { server, caData, dir, kubeconfigs, tokens, pids, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
const CONTROLLERS = [
  'garbage-collector-controller',
  'namespace-controller',
  'deployment-controller',
  'replicaset-controller',
  'statefulset-controller',
  'daemonset-controller',
  'job-controller',
  'node-lifecycle-controller',
];
const NODES = ['kwok-node-0', 'kwok-node-1'];
async function startWorkloads(launch, kubeconfig, server, token, dir) {
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
    `--config=${join(repoRoot, 'test/kube-testenv/kwok/stages.yaml')}`,
    '--manage-all-nodes=false',
    '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
    '--cidr=10.244.0.0/16',
    '--node-ip=127.0.0.1',
    '--node-lease-duration-seconds=40',
    '--v=WARN',
  ]);
  const tls = new Agent({ connect: { ca: await readFile(join(dir, 'pki/apiserver.crt'), 'utf8') } });
  try {
    for (const name of NODES) {
      const res = await request(`${server}/api/v1/nodes`, {
        method: 'POST',
        dispatcher: tls,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(fakeNode(name)),
      });
      const body = await res.body.text();
      if (res.statusCode !== 201) throw new Error(`creating node ${name}: HTTP ${res.statusCode} ${body}`);
    }
  } finally {
    await tls.close();
  }
}
function fakeNode(name) {
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
export function kubeconfigYaml(server, caData, user, token) {
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
async function waitFor(name, child, dir, deadline, ready) {
  let lastError = '';
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}):\n${await tail(dir, name)}`);
    }
    try {
      if (await ready()) return;
    } catch (e) {
      lastError = e.message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${name} was not ready in time (${lastError}):\n${await tail(dir, name)}`);
}
async function tail(dir, name) {
  const text = await readFile(join(dir, `${name}.log`), 'utf8').catch(() => '');
  return text.split('\n').slice(-40).join('\n');
}
async function terminate(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
function startWatchdog(dir) {
  const script = `
    pids=""
    while kill -0 ${process.pid} 2>/dev/null; do
      if read -t 1 pid; then pids="$pids $pid"; else sleep 1; fi
    done
    if [ -n "$pids" ]; then kill -TERM $pids 2>/dev/null; sleep 3; kill -KILL $pids 2>/dev/null; fi
    rm -rf '${dir}'`;
  const child = spawn('bash', ['-c', script], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  child.unref();
  return child;
}
async function freePorts(n) {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise((resolve, reject) => {
          const s = createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => {
    const addr = s.address();
    if (!addr || typeof addr === 'string') throw new Error('no port');
    return addr.port;
  });
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

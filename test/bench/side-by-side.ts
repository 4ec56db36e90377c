/**
 * The controller's resident memory after the side-by-side workload: 2 rounds of 50 concurrent
 * 5-change transactions (Patch on ConfigMaps), each round drained to Committed, then 5 s and
 * 30 s of idle. The same workload runs against Janus and, when its source is given, against the
 * Go operator that first defined the CRD (github.com/aalpar/janus, whose Transaction holds its
 * changes as separate ResourceChange objects), each on a control plane of its own, on one machine.
 *
 *   JANUS_PRIOR_ART_SRC=/path/to/aalpar/janus npm run bench -- side-by-side
 *
 * The Go operator is built there with `go build ./cmd/controller` (cached by commit under
 * ~/.cache/janus/prior-art) and runs outside a cluster, which skips its webhooks, as admin.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startControlPlane } from '../../src/cli/demo/control-plane.ts';
import { buildControlPlane } from '../../src/cli/demo/control-plane-binaries.ts';
import { applyManifests, readManifests } from '../../src/cli/demo/manifests.ts';
import { KubeClient } from '../../src/kube/client.ts';
import { CORE_MAPPINGS, Discovery, type KubeObject, Objects } from '../../src/kube/resources.ts';
import {
  ALL_ON_CONFIGMAPS,
  cmTarget,
  configMap,
  serviceAccount,
  transaction,
  txnRef,
} from '../support/cluster/saga.ts';
import { reapOnExit } from '../support/processes/reap.ts';
import { type Bench, timeUntil } from './harness.ts';
import { cpuSeconds, memoryMiB } from './proc.ts';
import { type Figure, figure } from './stats.ts';

const ROUNDS = 2;
const TRANSACTIONS = 50;
const CHANGES = 5;

interface Subject {
  /** Submits transaction `name` patching the ConfigMaps `targets`. */
  submit(name: string, targets: string[]): Promise<void>;
  /** How many of the namespace's transactions are Committed. */
  committed(): Promise<number>;
}

export interface Outcome {
  /** Resident MiB 5 s and 30 s after the last round drained. */
  after5s: number;
  after30s: number;
  /** Of after30s: file pages (the program's code) and anonymous memory (heaps, stacks). */
  file30s: number;
  anon30s: number;
  /** The most it was resident. */
  peak: number;
  cpuSeconds: number;
  drainSeconds: number;
}

async function runWorkload(admin: Objects, ns: string, pid: number, subject: Subject): Promise<Outcome> {
  const cpuBefore = await cpuSeconds(pid);
  const started = performance.now();
  for (let round = 0; round < ROUNDS; round++) {
    const names = Array.from({ length: TRANSACTIONS }, (_, t) => `r${round}-t${t}`);
    await Promise.all(
      names.flatMap((t) =>
        Array.from({ length: CHANGES }, (_, c) => admin.create(configMap(ns, `${t}-c${c}`, { v: 'old' }))),
      ),
    );
    await Promise.all(
      names.map((t) =>
        subject.submit(
          t,
          Array.from({ length: CHANGES }, (_, c) => `${t}-c${c}`),
        ),
      ),
    );
    const want = (round + 1) * TRANSACTIONS;
    await timeUntil(async () => (await subject.committed()) >= want, 900_000, 500);
  }
  const drainSeconds = (performance.now() - started) / 1000;
  const cpu = (await cpuSeconds(pid)) - cpuBefore;
  await sleep(5_000);
  const after5s = await memoryMiB(pid, 'VmRSS');
  await sleep(25_000);
  return {
    after5s,
    after30s: await memoryMiB(pid, 'VmRSS'),
    file30s: await memoryMiB(pid, 'RssFile'),
    anon30s: await memoryMiB(pid, 'RssAnon'),
    peak: await memoryMiB(pid, 'VmHWM'),
    cpuSeconds: cpu,
    drainSeconds,
  };
}

/** How many Transactions of `ns` are Committed: the same field in both CRDs. */
async function committedIn(admin: Objects, ns: string): Promise<number> {
  const list = await admin.list('tx.janus.io/v1alpha1', 'Transaction', ns);
  return list.items.filter((t) => (t as { status?: { phase?: string } }).status?.phase === 'Committed')
    .length;
}

function janusSubject(admin: Objects, ns: string): Subject {
  return {
    async submit(name, targets) {
      await admin.create(
        transaction(
          ns,
          name,
          targets.map((t) => ({
            target: cmTarget(t),
            type: 'Patch' as const,
            content: { data: { v: 'new' } },
          })),
        ),
      );
    },
    committed: () => committedIn(admin, ns),
  };
}

/** The same workload through the Go operator's API: a Transaction, its ResourceChanges, then sealed. */
function priorArtSubject(admin: Objects, ns: string): Subject {
  return {
    async submit(name, targets) {
      const created = await admin.create({
        apiVersion: 'tx.janus.io/v1alpha1',
        kind: 'Transaction',
        metadata: { name, namespace: ns },
        spec: { serviceAccountName: 'deployer' },
      } as KubeObject);
      await Promise.all(
        targets.map((target, order) =>
          admin.create({
            apiVersion: 'tx.janus.io/v1alpha1',
            kind: 'ResourceChange',
            metadata: {
              name: `${name}-${order}`,
              namespace: ns,
              ownerReferences: [
                {
                  apiVersion: 'tx.janus.io/v1alpha1',
                  kind: 'Transaction',
                  name,
                  uid: created.metadata.uid ?? '',
                },
              ],
            },
            spec: {
              target: { apiVersion: 'v1', kind: 'ConfigMap', name: target, namespace: ns },
              type: 'Patch',
              order,
              content: { data: { v: 'new' } },
            },
          } as KubeObject),
        ),
      );
      await admin.patch(txnRef(ns, name), { spec: { sealed: true } }, 'application/merge-patch+json');
    },
    committed: () => committedIn(admin, ns),
  };
}

/** The workload against the Janus controller `pid`, watching namespace `ns`. */
export function janusWorkload(admin: Objects, ns: string, pid: number): Promise<Outcome> {
  return runWorkload(admin, ns, pid, janusSubject(admin, ns));
}

/** Janus's half, on the benchmark's control plane. */
export async function sideBySideJanus(b: Bench): Promise<Outcome> {
  const ns = await b.namespace('side-by-side');
  const controller = await b.controller(ns, ['--no-leader-elect', '--concurrency=16']);
  try {
    return await janusWorkload(b.admin, ns, controller.child.pid ?? 0);
  } finally {
    await controller.stop();
  }
}

/** Builds the Go operator from `source` (once per commit) and returns the binary. */
function buildPriorArt(source: string): string {
  const commit = execFileSync('git', ['-C', source, 'rev-parse', '--short=12', 'HEAD'], {
    encoding: 'utf8',
  }).trim();
  const dir = join(homedir(), '.cache/janus/prior-art');
  const binary = join(dir, `controller-${commit}`);
  if (!existsSync(binary)) {
    mkdirSync(dir, { recursive: true });
    execFileSync('go', ['build', '-o', binary, './cmd/controller'], { cwd: source, stdio: 'inherit' });
  }
  return binary;
}

/** The Go operator's half, on a control plane of its own (its CRD has the same name as Janus's). */
export async function sideBySidePriorArt(source: string): Promise<Outcome> {
  const binary = buildPriorArt(source);
  const plane = await startControlPlane({ binDir: buildControlPlane() });
  const client = await KubeClient.load({ kubeconfig: plane.kubeconfigs.admin });
  try {
    const discovery = new Discovery(client);
    for (const m of CORE_MAPPINGS) discovery.seed(m);
    const admin = new Objects(client, discovery);
    await applyManifests(
      admin,
      await readManifests(
        join(source, 'config/crd/bases/tx.janus.io_transactions.yaml'),
        join(source, 'config/crd/bases/tx.janus.io_resourcechanges.yaml'),
      ),
    );
    await sleep(2_000); // the CRDs' discovery
    const ns = 'side-by-side';
    await admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await serviceAccount(admin, ns, 'deployer', [ALL_ON_CONFIGMAPS]);
    const child = reapOnExit(
      spawn(
        binary,
        [
          `--kubeconfig=${plane.kubeconfigs.admin}`,
          '--metrics-bind-address=0',
          '--health-probe-bind-address=0',
        ],
        { stdio: 'ignore' },
      ),
    );
    try {
      await sleep(3_000);
      return await runWorkload(admin, ns, child.pid ?? 0, priorArtSubject(admin, ns));
    } finally {
      child.kill('SIGTERM');
    }
  } finally {
    await client.connection.close();
    await plane.stop();
  }
}

export function outcomeFigures(who: string, o: Outcome): Record<string, Figure> {
  return {
    [`${who}: drain of ${ROUNDS} × ${TRANSACTIONS} 5-change transactions`]: figure([o.drainSeconds], 's'),
    [`${who}: controller CPU for them`]: figure([o.cpuSeconds], 's'),
    [`${who}: controller resident memory 5 s after`]: figure([o.after5s], 'MiB'),
    [`${who}: controller resident memory 30 s after`]: figure([o.after30s], 'MiB'),
    [`${who}: of which file pages (code)`]: figure([o.file30s], 'MiB'),
    [`${who}: of which anonymous memory (heaps, stacks)`]: figure([o.anon30s], 'MiB'),
    [`${who}: controller peak resident memory`]: figure([o.peak], 'MiB'),
  };
}

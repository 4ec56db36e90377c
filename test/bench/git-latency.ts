import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseDuration } from '../../src/api/duration.ts';
import type { Transaction } from '../../src/api/v1alpha1/index.ts';
import { configMap, getTxn, txnRef } from '../support/cluster/saga.ts';
import { type GitServer, pushCommit, startGitServer } from '../support/git/git-server.ts';
import { deliverGithubPush } from '../support/git/github-push.ts';
import { configMapYaml, directory, successfulPolls } from '../support/git/transaction-repo.ts';
import { type JanusRunProcess, startJanusRun } from '../support/processes/janus-run.ts';
import { type Bench, timeUntil } from './harness.ts';
import { type Figure, figure } from './stats.ts';

const CHANGES = 3;
const SECRET = 'bench-webhook-secret';

interface Delivery {
  /** Figure prefix: how Janus learns of the push. */
  label: string;
  pollInterval: string;
  webhook: boolean;
}

/** `janus run --poll-interval`'s default: what a deployment without a webhook gets. */
const DEFAULT_POLL_INTERVAL = '30s';
const DELIVERIES: readonly Delivery[] = [
  { label: 'webhook right after the push (polling every 1h)', pollInterval: '1h', webhook: true },
  {
    label: `polling every ${DEFAULT_POLL_INTERVAL} (no webhook)`,
    pollInterval: DEFAULT_POLL_INTERVAL,
    webhook: false,
  },
];

interface Timing {
  materializedMs: number;
  committedMs: number;
}

/** Times, from `pushed`, when Transaction `name` first exists and when it is Committed. */
async function observe(b: Bench, namespace: string, name: string, pushed: number): Promise<Timing> {
  let materializedMs: number | undefined;
  await timeUntil(
    async () => {
      const txn = (await b.admin.find(txnRef(namespace, name))) as unknown as Transaction | undefined;
      if (txn) materializedMs ??= performance.now() - pushed;
      const phase = txn?.status?.phase;
      if (phase === 'RolledBack' || phase === 'Failed') throw new Error(`${name} ended ${phase}`);
      return phase === 'Committed';
    },
    120_000,
    10,
  );
  return { materializedMs: materializedMs ?? Number.NaN, committedMs: performance.now() - pushed };
}

/** Directory `release-<r>`: CHANGES ConfigMap patches, as a user writes it. */
function release(r: number): { name: string; files: Record<string, string> } {
  const name = `release-${r}`;
  const changes = Object.fromEntries(
    Array.from({ length: CHANGES }, (_, c) => [
      `${10 * (c + 1)}-app-${c}.patch.yaml`,
      configMapYaml(`app-${c}`, { release: String(r + 1) }),
    ]),
  );
  return { name, files: directory(name, { changes }) };
}

interface Watched {
  namespace: string;
  /** The repository on the server's disk: pushes there are what a user's push does. */
  bare: string;
  janus: JanusRunProcess;
  dispose(): Promise<void>;
}

/** A namespace with the target ConfigMaps, a repository, and `janus run` past its first poll. */
async function watchedRepository(b: Bench, server: GitServer, delivery: Delivery): Promise<Watched> {
  const namespace = await b.namespace(delivery.webhook ? 'git-webhook' : 'git-poll');
  for (let c = 0; c < CHANGES; c++) await b.admin.create(configMap(namespace, `app-${c}`, { release: '0' }));
  const bare = await server.createRepo(namespace);
  await pushCommit(bare, 'main', { 'README.md': 'transactions live in transactions/\n' }, 'initial commit');
  const scratch = await mkdtemp(join(tmpdir(), 'janus-bench-latency-'));
  const secretFile = join(scratch, 'webhook-secret');
  await writeFile(secretFile, SECRET);
  const janus = await startJanusRun({
    kubeconfig: b.proxied.controller,
    repo: server.url(namespace),
    namespace,
    pollInterval: delivery.pollInterval,
    logLevel: 'info',
    args: delivery.webhook ? ['--webhook-secret-file', secretFile] : [],
  });
  const dispose = async () => {
    await janus.stop();
    await rm(scratch, { recursive: true, force: true });
  };
  try {
    await timeUntil(async () => (await successfulPolls(janus)) >= 1, 120_000, 100); // the baseline
  } catch (error) {
    await dispose();
    throw error;
  }
  return { namespace, bare, janus, dispose };
}

/** `runs` pushes through one `janus run` process learning of them by `delivery`. */
async function pushToCommitted(
  b: Bench,
  server: GitServer,
  delivery: Delivery,
  runs: number,
): Promise<Timing[]> {
  const { namespace, bare, janus, dispose } = await watchedRepository(b, server, delivery);
  try {
    const opsUrl = await janus.opsUrl();
    const timings: Timing[] = [];
    for (let r = 0; r < runs; r++) {
      // Polling: the push lands at a random moment of the poll cycle, as a user's would.
      if (!delivery.webhook) await sleep(Math.random() * parseDuration(delivery.pollInterval));
      const { name, files } = release(r);
      const commit = await pushCommit(bare, 'main', files, `release ${r + 1}`);
      const pushed = performance.now();
      if (delivery.webhook) await deliverGithubPush(opsUrl, commit, SECRET);
      timings.push(await observe(b, namespace, name, pushed));
      // The next run patches the same ConfigMaps: it waits for this one's locks to be released.
      await timeUntil(async () => !(await getTxn(b.admin, namespace, name)).metadata.finalizers?.length);
    }
    return timings;
  } catch (error) {
    const log = (await janus.logs()).slice(-10_000);
    throw new Error(`${(error as Error).message}\n--- janus run log (tail) ---\n${log}`, { cause: error });
  } finally {
    await dispose();
  }
}

export async function gitLatency(b: Bench, runs: number): Promise<Record<string, Figure>> {
  const server = await startGitServer();
  const out: Record<string, Figure> = {};
  try {
    for (const delivery of DELIVERIES) {
      const timings = await pushToCommitted(b, server, delivery, runs);
      const what = `${CHANGES}-change directory pushed, ${delivery.label}`;
      out[`${what}: push → Transaction created`] = figure(
        timings.map((t) => t.materializedMs),
        'ms',
      );
      out[`${what}: push → Committed`] = figure(
        timings.map((t) => t.committedMs),
        'ms',
      );
    }
    return out;
  } finally {
    await server.stop();
  }
}

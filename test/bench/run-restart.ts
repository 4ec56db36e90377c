/**
 * `janus run` restarted over 10,000 finished Transactions from its repository, each recorded on
 * the results branch, with notifications configured: everything that follows Transactions is
 * running (the controller, the results reporter, the notifier). Per restart, until the reporter
 * has read the results branch and 5 s more: the API requests it sent (watches aside), the
 * Transaction LIST pages and watches among them, its resident memory then and at its peak, and
 * the V8 heap it keeps alive (after a full collection, through the inspector: resident memory
 * also holds what the restart's work left for a later collection).
 *
 * Nothing is due: every outcome is on the results branch, every Transaction finished two days
 * ago (no notification replays, no commit status, inside the rollback window so none is pruned).
 * What a restart costs here is what following 10,000 Transactions costs.
 *
 * JANUS_BENCH_BASELINE=<checkout>: also runs that checkout's dist/ (built, with node_modules),
 * alternating with this one, over the same cluster and repository: before and after a change.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ANNOTATION_SOURCE_PATH,
  ANNOTATION_SOURCE_REPOSITORY,
  ANNOTATION_SOURCE_REVISION,
  ANNOTATION_SOURCE_SEQUENCE,
} from '../../src/api/v1alpha1/index.ts';
import { describeLocation, parseRepositoryLocation } from '../../src/git/location.ts';
import { renderTransactionResult } from '../../src/results/render-transaction.ts';
import { pushCommit, ScratchWorkTree, startGitServer } from '../support/git/git-server.ts';
import { startJanusRun } from '../support/processes/janus-run.ts';
import { type Bench, type Build, benchBuilds, isReady, timeUntil } from './harness.ts';
import { seedFinishedTransactions } from './memory.ts';
import { INSPECTABLE, liveHeapMiB, memoryMiB } from './proc.ts';
import { type Figure, figure } from './stats.ts';

const COUNT = 10_000;
const RESULTS_BRANCH = 'janus/results';
const TRANSACTIONS = '/apis/tx.janus.io/v1alpha1/';

interface Restart {
  requests: number;
  listPages: number;
  watches: number;
  readySeconds: number;
  rssMiB: number;
  peakMiB: number;
  heapMiB: number;
  rssAfterGcMiB: number;
}

export async function runRestart(b: Bench, runs: number): Promise<Record<string, Figure>> {
  const server = await startGitServer();
  const scratch = await mkdtemp(join(tmpdir(), 'janus-bench-run-restart-'));
  try {
    const ns = await b.namespace('run-restart');
    const bare = await server.createRepo(ns);
    const commit = await pushCommit(bare, 'main', { 'README.md': 'transactions live in transactions/\n' });
    const url = server.url(ns);
    const repository = describeLocation(parseRepositoryLocation(url));
    const records: Record<string, string> = {};
    await seedFinishedTransactions(b, ns, COUNT, {
      completedAt: new Date(Date.now() - 2 * 24 * 3_600_000),
      annotations: (i) => ({
        [ANNOTATION_SOURCE_REPOSITORY]: repository,
        [ANNOTATION_SOURCE_REVISION]: `main@sha1:${commit}`,
        [ANNOTATION_SOURCE_PATH]: `transactions/done-${i}`,
        [ANNOTATION_SOURCE_SEQUENCE]: String(i),
      }),
      seeded: (txn) =>
        Object.assign(
          records,
          renderTransactionResult(txn, { controllerVersion: 'bench', identity: 'bench' }).files,
        ),
    });
    await pushResults(bare, records);
    const config = join(scratch, 'notifications.yaml');
    const key = join(scratch, 'hmac-key');
    await writeFile(key, 'bench-hmac-key\n');
    await writeFile(
      config,
      [
        'providers:',
        `  - {name: audit, type: cloudevents, address: "http://127.0.0.1:9/events", secretFile: ${key}}`,
        `routes: [{namespaces: [${ns}], providers: [audit]}]`,
        '',
      ].join('\n'),
    );
    const start = (build: Build) =>
      startJanusRun({
        kubeconfig: b.proxied.controller,
        repo: url,
        namespace: ns,
        cacheDir: join(scratch, 'cache'),
        pollInterval: '1h',
        logLevel: 'info',
        env: { JANUS_NOTIFICATIONS_CONFIG: config, ...INSPECTABLE },
        ...(build.root && { root: build.root }),
      });
    const builds = benchBuilds();
    // The first run fetches the repository into the cache and records the baseline: not measured.
    await restart(b, () => start(builds[builds.length - 1] as Build));
    const measured = new Map<Build, Restart[]>(builds.map((build) => [build, []]));
    for (let run = 0; run < runs; run++)
      for (const build of builds) measured.get(build)?.push(await restart(b, () => start(build)));
    const out: Record<string, Figure> = {};
    for (const [build, restarts] of measured) {
      const prefix = builds.length > 1 ? `${build.label}: ` : '';
      const of = (pick: (r: Restart) => number, unit: string) => figure(restarts.map(pick), unit);
      const what = `${prefix}janus run restarted over ${COUNT.toLocaleString('en')} finished Transactions from Git`;
      out[`${what}: API requests until settled (watches aside)`] = of((r) => r.requests, '');
      out[`${what}: of which Transaction LIST pages`] = of((r) => r.listPages, '');
      out[`${what}: Transaction watches opened`] = of((r) => r.watches, '');
      out[`${what}: start → ready and the results branch read`] = of((r) => r.readySeconds, 's');
      out[`${what}: resident memory 5 s after`] = of((r) => r.rssMiB, 'MiB');
      out[`${what}: peak resident memory`] = of((r) => r.peakMiB, 'MiB');
      out[`${what}: V8 heap in use after a full collection`] = of((r) => r.heapMiB, 'MiB');
      out[`${what}: resident memory after that collection`] = of((r) => r.rssAfterGcMiB, 'MiB');
    }
    return out;
  } finally {
    await server.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The results branch as earlier terms left it: every seeded outcome recorded, in one commit. */
async function pushResults(bare: string, files: Record<string, string>): Promise<void> {
  const tree = await ScratchWorkTree.clone(bare);
  try {
    // 10,000 new objects would start git's automatic gc in the background, in the folder removed next.
    await tree.git('config', 'gc.auto', '0');
    await tree.checkout(RESULTS_BRANCH, 'orphan');
    await tree.write(files);
    await tree.commit(`${Object.keys(files).length} results`);
    await tree.push(RESULTS_BRANCH);
  } finally {
    await tree.dispose();
  }
}

/** One start of `janus run` until it is ready and has read the results branch, then 5 s; then stopped. */
async function restart(
  b: Bench,
  start: () => Promise<Awaited<ReturnType<typeof startJanusRun>>>,
): Promise<Restart> {
  b.proxy.reset();
  const started = performance.now();
  const janus = await start();
  try {
    const url = await janus.opsUrl();
    await timeUntil(
      async () => (await isReady(url)) && (await janus.logs()).includes('results branch read'),
      600_000,
      200,
    );
    const readySeconds = (performance.now() - started) / 1000;
    await sleep(5_000);
    const pid = janus.child.pid ?? 0;
    const [rssMiB, peakMiB] = [await memoryMiB(pid, 'VmRSS'), await memoryMiB(pid, 'VmHWM')];
    const requests = [...b.proxy.requests];
    const heapMiB = await liveHeapMiB(pid, () => janus.logs());
    const rssAfterGcMiB = await memoryMiB(pid, 'VmRSS');
    const onTransactions = requests.filter((r) => r.path.startsWith(TRANSACTIONS) && r.method === 'GET');
    return {
      requests: requests.filter((r) => !r.watch).length,
      listPages: onTransactions.filter((r) => !r.watch && r.path.endsWith('/transactions')).length,
      watches: onTransactions.filter((r) => r.watch).length,
      readySeconds,
      rssMiB,
      peakMiB,
      heapMiB,
      rssAfterGcMiB,
    };
  } finally {
    await janus.stop();
  }
}

/**
 * Cost of polling a large repository with the real materializer, over smart HTTP (git
 * http-backend): 5,000 transaction directories in 20,000 commits, written with git fast-import.
 *
 *   node test/bench/git-poll.ts [runs]      # default 5 runs; prints JSON on stdout
 *
 * Each run is a fresh process, as a restarted `janus run` would be, with the cache directory the
 * previous runs left (as a long-running one keeps it). In it: one warm-up poll, then an idle poll
 * (nothing new), then a poll after one new commit that adds a directory. Reported per poll: wall
 * time, CPU time of the polling process (the rest is waiting for the server: git http-backend
 * spawns a process per request), resident memory after it, and the HTTP requests and bytes it
 * cost. The cluster side is an in-memory stand-in (creating a Transaction is one API request
 * whatever the repository size); everything Git is real: fetch, change listing, parsing, results
 * branch read, commit and push.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Transaction } from '../../src/api/v1alpha1/index.ts';
import { GitRepository } from '../../src/git/index.ts';
import type { TransactionApi } from '../../src/gitops/cluster-transactions.ts';
import { Materializer, type PollSummary } from '../../src/gitops/materializer.ts';
import type { CursorStore, GitCursor } from '../../src/gitops/state.ts';
import { silentLogger } from '../../src/log/index.ts';
import { renderMaterialized } from '../../src/results/reporter.ts';
import { ResultsWriter } from '../../src/results/writer.ts';
import { git, pushCommit, startGitServer } from '../support/git-server.ts';

const DIRECTORIES = 5_000;
const COMMITS = 20_000;

interface PollSample {
  label: string;
  ms: number;
  /** CPU time of this process during the poll: the wall time minus waiting for the server. */
  cpuMs: number;
  rssMiB: number;
  summary: PollSummary;
}

// ---------------------------------------------------------------------------------------------
// Worker: one process, a few polls on command.

/** The cursor in a JSON file, so it survives from one worker process to the next. */
class FileCursorStore implements CursorStore {
  readonly #file: string;
  constructor(file: string) {
    this.#file = file;
  }
  async load(): Promise<GitCursor | undefined> {
    return readFile(this.#file, 'utf8').then(JSON.parse, () => undefined);
  }
  async save(cursor: GitCursor): Promise<void> {
    await writeFile(this.#file, JSON.stringify(cursor));
  }
}

/** Creating a Transaction costs one API request whatever the repository; here it costs nothing. */
const inMemoryCluster: TransactionApi = {
  async create(transaction: Transaction) {
    return {
      kind: 'created',
      transaction: { ...transaction, metadata: { ...transaction.metadata, uid: 'bench' } },
    };
  },
  async requestRollback() {
    return { kind: 'requested' };
  },
};

async function worker(url: string, cacheDir: string, cursorFile: string): Promise<void> {
  const context = { controllerVersion: 'bench', identity: 'bench' };
  const repository = await GitRepository.open({ location: url, cacheDir });
  const writer = await ResultsWriter.open({ repository, batchDelayMs: 60_000 });
  const materializer = new Materializer({
    repository,
    branch: 'main',
    root: 'transactions',
    parse: { defaultNamespace: 'default' },
    initial: 'baseline',
    cluster: inMemoryCluster,
    cursor: new FileCursorStore(cursorFile),
    results: writer,
    recordMaterialized: (txn) => writer.write(renderMaterialized(txn, context)),
    context,
    log: silentLogger(),
  });
  process.on('message', async (message: { poll: string } | { exit: true }) => {
    if ('exit' in message) {
      await writer.close();
      process.send?.({ peakRssMiB: process.resourceUsage().maxRSS / 1024 }, () => process.exit(0));
      return;
    }
    const started = performance.now();
    const cpu = process.cpuUsage();
    const summary = await materializer.poll();
    const ms = performance.now() - started;
    const used = process.cpuUsage(cpu);
    const sample: PollSample = {
      label: message.poll,
      ms,
      cpuMs: (used.user + used.system) / 1000,
      rssMiB: process.memoryUsage().rss / 2 ** 20,
      summary,
    };
    process.send?.(sample);
  });
  process.send?.({ ready: true });
}

// ---------------------------------------------------------------------------------------------
// Parent: the repository, the server, the runs.

/** A fast-import stream: every 4th commit adds a transaction directory, the others touch code. */
function history(): string {
  const parts: string[] = [];
  const blob = (path: string, text: string) =>
    `M 100644 inline ${path}\ndata ${Buffer.byteLength(text)}\n${text}\n`;
  for (let i = 1; i <= COMMITS; i++) {
    const time = 1_700_000_000 + i * 60;
    const message = `commit ${i}`;
    let change: string;
    if (i % (COMMITS / DIRECTORIES) === 0) {
      const name = `tx-${String(i / (COMMITS / DIRECTORIES)).padStart(5, '0')}`;
      change =
        blob(
          `transactions/${name}/transaction.yaml`,
          `apiVersion: tx.janus.io/v1alpha1\nkind: Transaction\nmetadata:\n  name: ${name}\nspec:\n  serviceAccountName: deployer\n`,
        ) +
        blob(
          `transactions/${name}/10-app.patch.yaml`,
          `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-${i % 50}\ndata:\n  release: "${i}"\n`,
        );
    } else {
      change = blob(`src/module-${i % 200}.txt`, `revision ${i}\n`);
    }
    parts.push(
      `commit refs/heads/main\ncommitter Bench <bench@example.invalid> ${time} +0000\n` +
        `data ${message.length}\n${message}\n${change}\n`,
    );
  }
  return parts.join('');
}

async function generate(bare: string): Promise<void> {
  const importer = spawn('git', ['fast-import', '--quiet'], {
    cwd: bare,
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  importer.stdin.end(history());
  const code = await new Promise<number | null>((resolve) => importer.once('close', resolve));
  if (code !== 0) throw new Error(`git fast-import exited with ${code}`);
  await git(bare, 'gc', '--quiet');
}

function startWorker(url: string, cacheDir: string, cursorFile: string): ChildProcess {
  return fork(new URL(import.meta.url).pathname, ['--worker', url, cacheDir, cursorFile], {
    stdio: 'inherit',
  });
}

function request<T>(child: ChildProcess, message: unknown): Promise<T> {
  return new Promise((resolve) => {
    child.once('message', (reply) => resolve(reply as T));
    child.send(message as object);
  });
}

function figure(values: number[], unit: string) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  const r = (n: number) => Math.round(n * 10) / 10;
  return { median: r(median), min: r(sorted[0]!), max: r(sorted.at(-1)!), runs: values.length, unit };
}

/** Median and spread of each measure of a kind of poll. */
function pollFigures(samples: PollSample[], traffic: Array<{ requests: number; bytes: number }>) {
  return {
    wallMs: figure(
      samples.map((p) => p.ms),
      'ms',
    ),
    cpuMs: figure(
      samples.map((p) => p.cpuMs),
      'ms',
    ),
    rssMiB: figure(
      samples.map((p) => p.rssMiB),
      'MiB',
    ),
    requests: figure(
      traffic.map((t) => t.requests),
      'requests',
    ),
    bytes: figure(
      traffic.map((t) => t.bytes),
      'bytes',
    ),
  };
}

async function main(runs: number): Promise<void> {
  const scratch = await mkdtemp(join(tmpdir(), 'janus-bench-git-'));
  const server = await startGitServer();
  try {
    const bare = await server.createRepo('big');
    const generated = performance.now();
    await generate(bare);
    const generateSeconds = (performance.now() - generated) / 1000;
    const packBytes =
      Number((await git(bare, 'count-objects', '-v')).match(/size-pack: (\d+)/)?.[1] ?? 0) * 1024;
    const cacheDir = join(scratch, 'cache');
    const cursorFile = join(scratch, 'cursor.json');
    const url = server.url('big');
    const traffic = async <T>(fn: () => Promise<T>) => {
      server.clearRequests();
      const result = await fn();
      const requests = server.requests('big');
      return {
        result,
        requests: requests.length,
        bytes: requests.reduce((n, r) => n + r.bytesSent + r.bytesReceived, 0),
      };
    };

    // First run: no cursor, no results branch: 5,000 directories recorded as baseline.
    const first = startWorker(url, cacheDir, cursorFile);
    await new Promise((resolve) => first.once('message', resolve)); // ready
    const firstRun = await traffic(() => request<PollSample>(first, { poll: 'first run (baseline)' }));
    const firstPeak = (await request<{ peakRssMiB: number }>(first, { exit: true })).peakRssMiB;

    const idle: PollSample[] = [];
    const fresh: PollSample[] = [];
    const peaks: number[] = [];
    const idleTraffic: Array<{ requests: number; bytes: number }> = [];
    const freshTraffic: Array<{ requests: number; bytes: number }> = [];
    for (let run = 1; run <= runs; run++) {
      const child = startWorker(url, cacheDir, cursorFile);
      await new Promise((resolve) => child.once('message', resolve)); // ready
      await request<PollSample>(child, { poll: 'warm-up' });
      const quiet = await traffic(() => request<PollSample>(child, { poll: 'idle' }));
      idle.push(quiet.result);
      idleTraffic.push({ requests: quiet.requests, bytes: quiet.bytes });
      const name = `bench-new-${run}`;
      await pushCommit(bare, 'main', {
        [`transactions/${name}/transaction.yaml`]: `apiVersion: tx.janus.io/v1alpha1\nkind: Transaction\nmetadata:\n  name: ${name}\nspec:\n  serviceAccountName: deployer\n`,
        [`transactions/${name}/10-app.patch.yaml`]: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\ndata:\n  run: "${run}"\n`,
      });
      const busy = await traffic(() => request<PollSample>(child, { poll: 'one new commit' }));
      if (busy.result.summary.materialized !== 1)
        throw new Error(`expected 1 materialized, got ${JSON.stringify(busy.result.summary)}`);
      fresh.push(busy.result);
      freshTraffic.push({ requests: busy.requests, bytes: busy.bytes });
      peaks.push((await request<{ peakRssMiB: number }>(child, { exit: true })).peakRssMiB);
    }

    const report = {
      repository: {
        directories: DIRECTORIES,
        commits: COMMITS + 1 + runs,
        packMiB: Math.round(packBytes / 2 ** 20),
        generateSeconds: Math.round(generateSeconds * 10) / 10,
      },
      firstRunBaseline: {
        ms: Math.round(firstRun.result.ms),
        cpuMs: Math.round(firstRun.result.cpuMs),
        rssMiB: Math.round(firstRun.result.rssMiB),
        peakRssMiB: Math.round(firstPeak),
        requests: firstRun.requests,
        bytes: firstRun.bytes,
        baseline: firstRun.result.summary.baseline,
      },
      idlePoll: pollFigures(idle, idleTraffic),
      pollAfterOneNewCommit: pollFigures(fresh, freshTraffic),
      peakRssMiBPerProcess: figure(peaks, 'MiB'),
      node: process.version,
    };
    process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  } finally {
    await server.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--worker') {
  const [, , , url, cacheDir, cursorFile] = process.argv;
  await worker(url ?? '', cacheDir ?? '', cursorFile ?? '');
} else {
  await main(Number(process.argv[2] ?? 5));
}

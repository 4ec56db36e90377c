/**
 * Cost of polling a large repository with the real materializer, over smart HTTP (git
 * http-backend): 5,000 transaction directories in 20,000 commits, written with git fast-import.
 *
 * Each run is a fresh process (git-poll-worker.ts), as a restarted `janus run` would be, with the
 * cache directory the previous runs left (as a long-running one keeps it). In it: one warm-up
 * poll, then an idle poll (nothing new), then a poll after one new commit that adds a directory.
 * Measured per poll: wall time, CPU time of the polling process (the rest is waiting for the
 * server: git http-backend spawns a process per request), resident memory after it, and the HTTP
 * requests and bytes it cost. The cluster side is an in-memory stand-in (creating a Transaction is
 * one API request whatever the repository size); everything Git is real: fetch, change listing,
 * parsing, results branch read, commit and push.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { environmentFor, nodeFlagsFor } from '../../src/cli/node-flags.ts';
import { configMapYaml, directory } from '../cluster/gitops/harness.ts';
import { type GitServer, git, pushCommit, startGitServer } from '../support/git/git-server.ts';
import type { PollSample, WorkerMessage } from './git-poll-worker.ts';
import { type Figure, figure } from './stats.ts';
import { ask, nextMessage } from './worker-channel.ts';

const DIRECTORIES = 5_000;
const COMMITS = 20_000;
const REPO = 'big';
/** How figures name the measured polls. */
const POLL_OF = `poll of ${thousands(DIRECTORIES)} directories in ${thousands(COMMITS)} commits`;

function thousands(n: number): string {
  return n.toLocaleString('en');
}

/** Transaction directory `name` with one ConfigMap Patch, as a user writes it. */
function patchDirectory(name: string, configMap: string, value: string): Record<string, string> {
  return directory(name, { changes: { '10-app.patch.yaml': configMapYaml(configMap, { release: value }) } });
}

/** A fast-import stream: every 4th commit adds a transaction directory, the others touch code. */
function history(): string {
  const parts: string[] = [];
  const blob = (path: string, text: string) =>
    `M 100644 inline ${path}\ndata ${Buffer.byteLength(text)}\n${text}\n`;
  for (let i = 1; i <= COMMITS; i++) {
    const time = 1_700_000_000 + i * 60;
    const message = `commit ${i}`;
    const files =
      i % (COMMITS / DIRECTORIES) === 0
        ? patchDirectory(
            `tx-${String(i / (COMMITS / DIRECTORIES)).padStart(5, '0')}`,
            `app-${i % 50}`,
            `${i}`,
          )
        : { [`src/module-${i % 200}.txt`]: `revision ${i}\n` };
    const change = Object.entries(files)
      .map(([path, text]) => blob(path, text))
      .join('');
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

function request<T>(child: ChildProcess, message: WorkerMessage): Promise<T> {
  return ask<T>(child, message);
}

interface WorkerSetup {
  url: string;
  cacheDir: string;
  cursorFile: string;
}

/** Runs `use` against a fresh worker process, then ends it; returns what `use` did and its peak RSS. */
async function inWorker<T>(
  setup: WorkerSetup,
  use: (child: ChildProcess) => Promise<T>,
): Promise<{ result: T; peakRssMiB: number }> {
  const child = fork(
    new URL('./git-poll-worker.ts', import.meta.url).pathname,
    [setup.url, setup.cacheDir, setup.cursorFile],
    // the flags and environment janus run starts with
    {
      stdio: 'inherit',
      execArgv: [...nodeFlagsFor('run')],
      env: { ...process.env, ...environmentFor('run') },
    },
  );
  await nextMessage(child); // { ready: true }
  const result = await use(child);
  const { peakRssMiB } = await request<{ peakRssMiB: number }>(child, { exit: true });
  return { result, peakRssMiB };
}

interface MeasuredPoll {
  sample: PollSample;
  requests: number;
  bytes: number;
}

/** One poll in the worker, with the HTTP requests and bytes (both ways) the server saw for it. */
async function measuredPoll(server: GitServer, child: ChildProcess, label: string): Promise<MeasuredPoll> {
  server.clearRequests();
  const sample = await request<PollSample>(child, { poll: label });
  const requests = server.requests(REPO);
  return {
    sample,
    requests: requests.length,
    bytes: requests.reduce((n, r) => n + r.bytesSent + r.bytesReceived, 0),
  };
}

/** The figures of one kind of poll, named "<kind>: <measure>". */
function pollFigures(kind: string, polls: MeasuredPoll[]): Record<string, Figure> {
  return {
    [`${kind}: wall time`]: figure(
      polls.map((p) => p.sample.ms),
      'ms',
    ),
    [`${kind}: CPU time of the polling process`]: figure(
      polls.map((p) => p.sample.cpuMs),
      'ms',
    ),
    [`${kind}: resident memory after`]: figure(
      polls.map((p) => p.sample.rssMiB),
      'MiB',
    ),
    [`${kind}: HTTP requests`]: figure(
      polls.map((p) => p.requests),
      'requests',
    ),
    [`${kind}: HTTP bytes (both ways)`]: figure(
      polls.map((p) => p.bytes / 1024),
      'KiB',
    ),
  };
}

export async function gitPoll(runs: number): Promise<Record<string, Figure>> {
  const scratch = await mkdtemp(join(tmpdir(), 'janus-bench-git-'));
  const server = await startGitServer();
  try {
    const bare = await server.createRepo(REPO);
    await generate(bare);
    const setup = {
      url: server.url(REPO),
      cacheDir: join(scratch, 'cache'),
      cursorFile: join(scratch, 'cursor.json'),
    };
    // First run: no cursor, no results branch: every directory is recorded as baseline.
    const first = await inWorker(setup, (child) => measuredPoll(server, child, 'first run (baseline)'));
    if (first.result.sample.summary.baseline !== DIRECTORIES)
      throw new Error(`expected a baseline of ${DIRECTORIES}, got ${JSON.stringify(first.result.sample)}`);

    const idle: MeasuredPoll[] = [];
    const oneCommit: MeasuredPoll[] = [];
    const peaks: number[] = [];
    for (let run = 1; run <= runs; run++) {
      const { result, peakRssMiB } = await inWorker(setup, async (child) => {
        await request<PollSample>(child, { poll: 'warm-up' });
        const quiet = await measuredPoll(server, child, 'idle');
        await pushCommit(bare, 'main', patchDirectory(`bench-new-${run}`, 'app', `${run}`));
        const busy = await measuredPoll(server, child, 'one new commit');
        if (busy.sample.summary.materialized !== 1)
          throw new Error(`expected 1 materialized, got ${JSON.stringify(busy.sample.summary)}`);
        return { quiet, busy };
      });
      idle.push(result.quiet);
      oneCommit.push(result.busy);
      peaks.push(peakRssMiB);
    }

    return {
      [`${POLL_OF}, first run (all recorded as baseline): wall time`]: figure([first.result.sample.ms], 'ms'),
      [`${POLL_OF}, first run: peak resident memory`]: figure([first.peakRssMiB], 'MiB'),
      ...pollFigures(`${POLL_OF}, idle`, idle),
      ...pollFigures(`${POLL_OF}, one new commit`, oneCommit),
      [`${POLL_OF}, later runs: peak resident memory`]: figure(peaks, 'MiB'),
    };
  } finally {
    await server.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * One poll of a commit adding N directories (the cli bench's poll), in a worker started with the
 * Node flags given after `--`; for profiling (--cpu-prof, --heap-prof) and paired flag trades.
 *
 *   node test/bench/poll-once.ts [directories] -- [node flags…]
 *
 * Prints one JSON line: { ms, cpuMs, peakRssMiB, materialized }.
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { git, startGitServer } from '../support/git-server.ts';
import { writeBigRepository } from './fixtures/big-repository.ts';
import type { PollSample } from './git-poll-worker.ts';

const dash = process.argv.indexOf('--');
const directories = Number(process.argv[2] && process.argv[2] !== '--' ? process.argv[2] : 400);
const flags = dash >= 0 ? process.argv.slice(dash + 1) : [];
const scratch = await mkdtemp(join(tmpdir(), 'janus-poll-once-'));
const server = await startGitServer();
try {
  const bare = await server.createRepo('r');
  const work = join(scratch, 'r');
  await git(scratch, 'clone', '--quiet', bare, work);
  await git(work, 'commit', '--quiet', '--allow-empty', '-m', 'start');
  await git(work, 'push', '--quiet', 'origin', 'HEAD:main');
  const child = fork(
    new URL('./git-poll-worker.ts', import.meta.url).pathname,
    [server.url('r'), join(scratch, 'cache'), join(scratch, 'cursor.json')],
    { stdio: 'inherit', execArgv: flags },
  );
  const ask = <T>(out: object) =>
    new Promise<T>((resolve) => {
      child.once('message', (reply) => resolve(reply as T));
      child.send(out);
    });
  await new Promise((resolve) => child.once('message', resolve));
  await ask({ poll: 'first' });
  await writeBigRepository(work, directories, 'default');
  await git(work, 'add', '-A');
  await git(work, 'commit', '--quiet', '-m', `${directories} directories`);
  await git(work, 'push', '--quiet', 'origin', 'HEAD:main');
  const sample = await ask<PollSample>({ poll: 'commit' });
  const { peakRssMiB } = await ask<{ peakRssMiB: number }>({ exit: true });
  await new Promise((resolve) => child.once('exit', resolve));
  process.stdout.write(
    `${JSON.stringify({
      ms: Math.round(sample.ms),
      cpuMs: Math.round(sample.cpuMs),
      peakRssMiB: Math.round(peakRssMiB),
      materialized: sample.summary.materialized,
    })}\n`,
  );
} finally {
  await server.stop();
  await rm(scratch, { recursive: true, force: true });
}

/**
 * One poll of a commit adding N directories (the cli bench's poll), in a worker started with the
 * Node flags given after `--` and running the compiled modules (dist/, built first); for profiling (--cpu-prof, --heap-prof) and paired flag trades.
 *
 *   node test/bench/poll-once.ts [directories] [--commits] [--verify-signatures] [--protocol-v0] -- [node flags…]
 *
 * --commits: one commit per directory instead of one for all (a poll of many commits).
 * --verify-signatures: the commits are SSH-signed (a key made by ssh-keygen) either way; with
 * this flag the worker verifies them against an allowed-signers file holding that key.
 * --protocol-v0: the server answers in protocol version 0 whatever the client asks for (as git
 * http-backend without GIT_PROTOCOL, and several hosted servers).
 *
 * Prints one JSON line: { ms, cpuMs, materializedMs, materializedCpuMs, peakRssMiB, materialized,
 * rejected }; materialized… until the last Transaction was created, before the results' push.
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { git, startGitServer } from '../support/git/git-server.ts';
import { makeKey, signerLine, signingConfig, type TestKey } from '../support/git/ssh-signing.ts';
import { buildDist } from '../support/processes/build.ts';
import { useScratchTmp } from '../support/scratch-tmp.ts';
import { writeBigRepository, writeDirectory } from './fixtures/big-repository.ts';
import type { PollSample } from './git-poll-worker.ts';
import { ask, nextMessage } from './worker-channel.ts';

const dash = process.argv.indexOf('--');
const own = process.argv.slice(2, dash >= 0 ? dash : undefined);
const directories = Number(own.find((a) => /^\d+$/.test(a)) ?? 400);
const perCommit = own.includes('--commits');
const verify = own.includes('--verify-signatures');
const protocolV0Only = own.includes('--protocol-v0');
const flags = dash >= 0 ? process.argv.slice(dash + 1) : [];
buildDist(); // the worker runs the compiled modules, as janus run does
const removeScratch = useScratchTmp('poll-once'); // the key, the repositories, the worker's cache
const key = makeKey('ed25519', 'bench');
const sign = signingConfig(key);
const scratch = await mkdtemp(join(tmpdir(), 'janus-poll-once-'));
const server = await startGitServer({ protocolV0Only });
try {
  const bare = await server.createRepo('r');
  const work = join(scratch, 'r');
  await git(scratch, 'clone', '--quiet', bare, work);
  await git(work, 'commit', '--quiet', '--allow-empty', '-m', 'start');
  await git(work, 'push', '--quiet', 'origin', 'HEAD:main');
  const child = fork(
    new URL('./git-poll-worker.ts', import.meta.url).pathname,
    [
      server.url('r'),
      join(scratch, 'cache'),
      join(scratch, 'cursor.json'),
      ...(verify ? [await allowedSigners(scratch, key)] : []),
    ],
    { stdio: 'inherit', execArgv: flags },
  );
  await nextMessage(child); // { ready: true }
  await ask(child, { poll: 'first' });
  if (perCommit) {
    for (let i = 0; i < directories; i++) {
      await writeDirectory(work, i, 'default');
      await git(work, 'add', '-A');
      await git(work, ...sign, 'commit', '--quiet', '-m', `directory ${i}`);
    }
  } else {
    await writeBigRepository(work, directories, 'default');
    await git(work, 'add', '-A');
    await git(work, ...sign, 'commit', '--quiet', '-m', `${directories} directories`);
  }
  await git(work, 'push', '--quiet', 'origin', 'HEAD:main');
  const sample = await ask<PollSample>(child, { poll: 'commit' });
  const { peakRssMiB } = await ask<{ peakRssMiB: number }>(child, { exit: true });
  await new Promise((resolve) => child.once('exit', resolve));
  process.stdout.write(
    `${JSON.stringify({
      ms: Math.round(sample.ms),
      cpuMs: Math.round(sample.cpuMs),
      materializedMs: Math.round(sample.materialized?.ms ?? Number.NaN),
      materializedCpuMs: Math.round(sample.materialized?.cpuMs ?? Number.NaN),
      peakRssMiB: Math.round(peakRssMiB),
      materialized: sample.summary.materialized,
      rejected: sample.summary.rejected,
    })}\n`,
  );
} finally {
  await server.stop();
  await rm(scratch, { recursive: true, force: true });
  removeScratch();
}

async function allowedSigners(dir: string, signer: TestKey): Promise<string> {
  const file = join(dir, 'allowed_signers');
  await writeFile(file, `${signerLine('bench@example.com', signer, 'namespaces="git"')}\n`);
  return file;
}

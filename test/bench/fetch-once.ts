/**
 * One fetch, alone: the cli bench's commit of N directories (fixtures/big-repository.ts, 400 by
 * default: ~13 MB of YAML) fetched into an empty cache by a fresh process, from a server that
 * speaks protocol version 2 or (--protocol-v0) only version 0. What the poll's fetch costs,
 * without the parsing and the results that dominate poll-once.ts.
 *
 *   node test/bench/fetch-once.ts [directories] [--protocol-v0] [--runs N]
 *
 * Prints one JSON line per run: { ms, cpuMs, peakRssMiB, requests, packKiB }; the child runs with
 * janus run's Node flags and environment.
 */
import { fork } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { environmentFor, nodeFlagsFor } from '../../src/cli/node-flags.ts';
import { GitRepository } from '../../src/git/index.ts';
import { git, startGitServer } from '../support/git/git-server.ts';
import { writeBigRepository } from './fixtures/big-repository.ts';

const [mode, url, cacheDir] = process.argv.slice(2);
if (mode === '--child') {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const repo = await GitRepository.open({ location: url ?? '', cacheDir: cacheDir ?? '' });
  await repo.fetchBranch('main');
  const used = process.cpuUsage(cpu);
  const status = await readFile('/proc/self/status', 'utf8');
  process.send?.({
    ms: Math.round(performance.now() - started),
    cpuMs: Math.round((used.user + used.system) / 1000),
    peakRssMiB: Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]) / 1024),
  });
} else {
  const own = process.argv.slice(2);
  const directories = Number(own.find((a) => /^\d+$/.test(a)) ?? 400);
  const runs = Number(own[own.indexOf('--runs') + 1] ?? 1) || 1;
  const server = await startGitServer({ protocolV0Only: own.includes('--protocol-v0') });
  const scratch = await mkdtemp(join(tmpdir(), 'janus-fetch-once-'));
  try {
    const bare = await server.createRepo('r');
    const work = join(scratch, 'r');
    await git(scratch, 'clone', '--quiet', bare, work);
    await writeBigRepository(work, directories, 'default');
    await git(work, 'add', '-A');
    await git(work, 'commit', '--quiet', '-m', `${directories} directories`);
    await git(work, 'push', '--quiet', 'origin', 'HEAD:main');
    for (let run = 0; run < runs; run++) {
      server.clearRequests();
      // the flags and environment janus run starts with
      const child = fork(
        new URL(import.meta.url).pathname,
        ['--child', server.url('r'), await mkdtemp(join(scratch, 'cache-'))],
        { execArgv: [...nodeFlagsFor('run')], env: { ...process.env, ...environmentFor('run') } },
      );
      const sample = await new Promise((resolve) => child.once('message', resolve));
      await new Promise((resolve) => child.once('exit', resolve));
      const requests = server.requests('r');
      const packKiB = Math.round(requests.reduce((n, r) => n + r.bytesSent, 0) / 1024);
      process.stdout.write(
        `${JSON.stringify({ ...(sample as object), requests: requests.length, packKiB })}\n`,
      );
    }
  } finally {
    await server.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Where people wait (issue 26): `janus validate` and `janus plan` in pull-request CI on a
 * repository of 400 transaction directories (2,400 manifests, test/bench/fixtures), and the
 * poller reading a commit that adds all 400, each against the floor set by the YAML library
 * itself (parsing the same files with parseAllDocuments and a LineCounter, nothing else).
 *
 * The CLI runs as users run it, through bin/janus (the launcher picks its Node flags); the
 * validate run with janus controller's flags shows what they would cost a one-shot command. The
 * poll runs in git-poll-worker.ts, with janus run's flags and, for the trade, the controller's.
 */
import { fork, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONTROLLER_NODE_FLAGS, environmentFor, nodeFlagsFor } from '../../src/cli/node-flags.ts';
import { REPO_ROOT } from '../support/cluster/manifests.ts';
import { ALL_ON_CONFIGMAPS, testNamespace } from '../support/cluster/saga.ts';
import { deployment } from '../support/cluster/workloads.ts';
import { git, startGitServer } from '../support/git/git-server.ts';
import { writeBigRepository } from './fixtures/big-repository.ts';
import type { PollSample } from './git-poll-worker.ts';
import type { Bench } from './harness.ts';
import { memoryMiB } from './proc.ts';
import { type Figure, figure } from './stats.ts';
import { ask, nextMessage } from './worker-channel.ts';

const DIRECTORIES = 400;
const OF = `${DIRECTORIES} directories (2,400 manifests)`;

interface Run {
  ms: number;
  peakMiB: number;
  code: number | null;
  stderr: string;
}

/** Runs a command to its end, with its wall time and its peak resident memory (VmHWM, sampled). */
async function measured(command: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Run> {
  const started = performance.now();
  const child = spawn(command, args, { cwd: REPO_ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  let peakMiB = 0;
  const sampler = setInterval(() => {
    memoryMiB(child.pid ?? 0, 'VmHWM').then(
      (m) => {
        peakMiB = Math.max(peakMiB, m);
      },
      () => {},
    );
  }, 20);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  clearInterval(sampler);
  return { ms: performance.now() - started, peakMiB, code, stderr };
}

function figures(name: string, runs: Run[]): Record<string, Figure> {
  return {
    [`${name}: wall time`]: figure(
      runs.map((r) => r.ms / 1000),
      's',
    ),
    [`${name}: peak resident memory`]: figure(
      runs.map((r) => r.peakMiB),
      'MiB',
    ),
  };
}

async function repeat(times: number, once: () => Promise<Run>, expectCode = 0): Promise<Run[]> {
  const runs: Run[] = [];
  for (let i = 0; i < times; i++) {
    const run = await once();
    if (run.code !== expectCode)
      throw new Error(`exit ${run.code}, expected ${expectCode}:\n${run.stderr.slice(0, 4000)}`);
    runs.push(run);
  }
  return runs;
}

/** parseAllDocuments with a LineCounter over every file, in a fresh process with V8's defaults. */
const PARSE_FLOOR = `
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LineCounter, parseAllDocuments } from 'yaml';
const root = process.argv[1];
for (const d of readdirSync(root)) for (const f of readdirSync(join(root, d))) {
  const lineCounter = new LineCounter();
  for (const doc of parseAllDocuments(readFileSync(join(root, d, f), 'utf8'), { lineCounter })) doc.toJS();
}`;

export async function cli(bench: Bench, runs: number): Promise<Record<string, Figure>> {
  const scratch = await mkdtemp(join(tmpdir(), 'janus-bench-cli-'));
  try {
    const namespace = await testNamespace(bench.admin, 'bench-cli', {
      deployer: [ALL_ON_CONFIGMAPS, { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] }],
    });
    for (let i = 0; i < 50; i++)
      await bench.admin.create(
        deployment(namespace, `web-${i}`, 'ghcr.io/example/web:1', {
          replicas: 0,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'web', image: 'web:1' }] },
          },
        }),
      );
    const repo = join(scratch, 'repo');
    await writeBigRepository(repo, DIRECTORIES, namespace);
    const policy = ['--allowed-namespaces', namespace, '--allowed-service-accounts', 'deployer'];
    const janus = join(REPO_ROOT, 'bin/janus');

    const floor = await repeat(runs, () =>
      measured(process.execPath, ['--input-type=module', '-e', PARSE_FLOOR, join(repo, 'transactions')]),
    );
    const validate = await repeat(runs, () => measured(janus, ['validate', repo, ...policy]));
    const validateSlow = await repeat(runs, () =>
      measured(process.execPath, [
        ...CONTROLLER_NODE_FLAGS,
        join(REPO_ROOT, 'src/cli/main.ts'),
        'validate',
        repo,
        ...policy,
      ]),
    );
    const plan = await repeat(
      runs,
      () => measured(janus, ['plan', repo, ...policy, '--kubeconfig', bench.env.info.kubeconfigs.admin]),
      1, // something would change: every directory
    );
    const median = (rs: Run[]) =>
      figure(
        rs.map((r) => r.ms),
        'ms',
      ).median;
    return {
      [`YAML parse floor, ${OF}: wall time`]: figure(
        floor.map((r) => r.ms / 1000),
        's',
      ),
      ...figures(`janus validate, ${OF}`, validate),
      'janus validate against the parse floor': figure([median(validate) / median(floor)], '×'),
      ...figures(`janus validate with janus controller's flags, ${OF}`, validateSlow),
      ...figures(`janus plan (dry run of 2,000 changes), ${OF}`, plan),
      ...(await pollOfOneCommit(runs, scratch, median(floor))),
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

/** The poller reading one commit that adds all the directories, with janus run's flags and the controller's. */
async function pollOfOneCommit(
  runs: number,
  scratch: string,
  floorMs: number,
): Promise<Record<string, Figure>> {
  const server = await startGitServer();
  try {
    const result: Record<string, Figure> = {};
    for (const [label, flags, env] of [
      ["janus run's flags", nodeFlagsFor('run'), environmentFor('run')],
      ["janus controller's flags (janus run's until issue 26)", CONTROLLER_NODE_FLAGS, {}],
    ] as const) {
      const samples: PollSample[] = [];
      const peaks: number[] = [];
      for (let run = 0; run < runs; run++) {
        const name = `cli-${label.length}-${run}`;
        const bare = await server.createRepo(name);
        const work = join(scratch, name);
        await git(scratch, 'clone', '--quiet', bare, work);
        await git(work, 'commit', '--quiet', '--allow-empty', '-m', 'start');
        await git(work, 'push', '--quiet', 'origin', 'HEAD:main');
        const child = fork(
          new URL('./git-poll-worker.ts', import.meta.url).pathname,
          [server.url(name), join(scratch, `${name}-cache`), join(scratch, `${name}-cursor.json`)],
          { stdio: 'inherit', execArgv: [...flags], env: { ...process.env, ...env } },
        );
        await nextMessage(child); // { ready: true }
        await ask<PollSample>(child, { poll: 'first' }); // the cursor, on an empty repository
        await writeBigRepository(work, DIRECTORIES, 'default');
        await git(work, 'add', '-A');
        await git(work, 'commit', '--quiet', '-m', `${DIRECTORIES} directories`);
        await git(work, 'push', '--quiet', 'origin', 'HEAD:main');
        const sample = await ask<PollSample>(child, { poll: 'commit' });
        if (sample.summary.materialized !== DIRECTORIES)
          throw new Error(`expected ${DIRECTORIES} materialized, got ${JSON.stringify(sample.summary)}`);
        samples.push(sample);
        peaks.push((await ask<{ peakRssMiB: number }>(child, { exit: true })).peakRssMiB);
      }
      const name = `poll of one commit adding ${OF}, ${label}`;
      result[`${name}: wall time`] = figure(
        samples.map((s) => s.ms / 1000),
        's',
      );
      result[`${name}: CPU time`] = figure(
        samples.map((s) => s.cpuMs / 1000),
        's',
      );
      result[`${name}: peak resident memory`] = figure(peaks, 'MiB');
      result[`${name}: against the parse floor`] = figure(
        [
          figure(
            samples.map((s) => s.ms),
            'ms',
          ).median / floorMs,
        ],
        '×',
      );
      // Materializing: until the last Transaction is created, before the results are pushed.
      const until = samples.map((s) => s.materialized ?? { ms: Number.NaN, cpuMs: Number.NaN });
      result[`${name}: until the last Transaction is created, wall time`] = figure(
        until.map((m) => m.ms / 1000),
        's',
      );
      result[`${name}: until the last Transaction is created, CPU time`] = figure(
        until.map((m) => m.cpuMs / 1000),
        's',
      );
      result[`${name}: until the last Transaction is created, against the parse floor`] = figure(
        [
          figure(
            until.map((m) => m.ms),
            'ms',
          ).median / floorMs,
        ],
        '×',
      );
    }
    return result;
  } finally {
    await server.stop();
  }
}

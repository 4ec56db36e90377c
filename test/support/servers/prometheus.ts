/**
 * A real Prometheus for the tests: built from its pinned Go module by
 * test/kube-testenv/build-prometheus.sh, started on a free loopback port with a scrape config
 * pointing at the tests' exporter (metrics-exporter.ts) every second, and stopped with the test
 * worker however it ends (reap.ts). No fake query API: the tests query what Prometheus scraped.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { terminate } from '../../../src/cli/demo/control-plane-processes.ts';
import { eventually } from '../eventually.ts';
import { reapOnExit } from '../processes/reap.ts';
import { builtBinaries } from './cached-build.ts';

const BUILD_SCRIPT = fileURLToPath(new URL('../../kube-testenv/build-prometheus.sh', import.meta.url));

/** Scrape and rule evaluation every second, so a test sees a change within a few seconds. */
export const SCRAPE_INTERVAL = '1s';

let binDir: string | undefined;

/** The folder holding `prometheus`: the script builds it once, then answers from its cache. */
export function prometheusBinaries(): string {
  binDir ??= builtBinaries(BUILD_SCRIPT, process.env.JANUS_PROMETHEUS_BIN);
  return binDir;
}

export interface PrometheusOptions {
  /** host:port targets scraped as job "exporter". */
  readonly targets: readonly string[];
  /** Protects the API with basic auth (Prometheus's web config): the user and a bcrypt hash of the password. */
  readonly basicAuth?: { readonly username: string; readonly bcryptHash: string } | undefined;
}

export interface TestPrometheus {
  /** http://127.0.0.1:<port> */
  readonly address: string;
  /** Milliseconds from spawn to /-/ready. */
  readonly startedInMs: number;
  stop(): Promise<void>;
}

export async function startPrometheus(opts: PrometheusOptions): Promise<TestPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'janus-prometheus-'));
  const config = [
    'global:',
    `  scrape_interval: ${SCRAPE_INTERVAL}`,
    `  evaluation_interval: ${SCRAPE_INTERVAL}`,
    'scrape_configs:',
    '  - job_name: exporter',
    '    static_configs:',
    `      - targets: [${opts.targets.map((t) => JSON.stringify(t)).join(', ')}]`,
    '',
  ].join('\n');
  await writeFile(join(dir, 'prometheus.yml'), config);
  const args = [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    // Port 0: the kernel picks a free port, which Prometheus logs ("Listening on"): no race.
    '--web.listen-address=127.0.0.1:0',
    '--log.level=info',
  ];
  if (opts.basicAuth) {
    const { username, bcryptHash } = opts.basicAuth;
    await writeFile(
      join(dir, 'web.yml'),
      `basic_auth_users:\n  ${JSON.stringify(username)}: ${JSON.stringify(bcryptHash)}\n`,
    );
    args.push(`--web.config.file=${join(dir, 'web.yml')}`);
  }
  const started = performance.now();
  const log = join(dir, 'prometheus.log');
  const child = reapOnExit(
    spawn(join(prometheusBinaries(), 'prometheus'), args, { stdio: ['ignore', 'ignore', 'pipe'] }),
  );
  child.stderr?.pipe(createWriteStream(log));
  const stop = async () => {
    await terminate(child);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const address = await eventually(() => listeningAddress(child, log), {
      timeoutMs: 60_000,
      intervalMs: 50,
    });
    await eventually(() => ready(address, opts.basicAuth), { timeoutMs: 60_000, intervalMs: 50 });
    return { address, startedInMs: Math.round(performance.now() - started), stop };
  } catch (e) {
    const text = await readFile(log, 'utf8').catch(() => '');
    await stop();
    throw new Error(
      `Prometheus did not start: ${(e as Error).message}\n${text.split('\n').slice(-30).join('\n')}`,
    );
  }
}

async function listeningAddress(child: ChildProcess, log: string): Promise<string> {
  if (child.exitCode !== null || child.signalCode !== null) {
    throw new Error(`exited (${child.exitCode ?? child.signalCode})`);
  }
  const found = /msg="Listening on"[^\n]*? address=(127\.0\.0\.1:\d+)/.exec(await readFile(log, 'utf8'));
  if (!found) throw new Error('not listening yet');
  return `http://${found[1]}`;
}

async function ready(address: string, auth: PrometheusOptions['basicAuth']): Promise<void> {
  // /-/ready is behind the web config's basic auth too; any answer but 503 means it is serving.
  const res = await fetch(`${address}/-/ready`, { signal: AbortSignal.timeout(2_000) });
  await res.body?.cancel();
  if (res.status === 503 || (!auth && res.status !== 200)) throw new Error(`/-/ready answered ${res.status}`);
}

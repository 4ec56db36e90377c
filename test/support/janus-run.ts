/**
 * Runs `janus run` as a separate process, as the controller identity (bound only by the RBAC in
 * manifests/), against a real Git server: what ships, end to end, and killable for real.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NODE_FLAGS } from '../../src/cli/node-flags.ts';
import { eventually } from './eventually.ts';
import { REPO_ROOT } from './manifests.ts';
import { reapOnExit } from './reap.ts';

export interface JanusRunOptions {
  kubeconfig: string;
  /** The repository URL or path (--repo). */
  repo: string;
  /** Reconcile and report only this namespace (tests run side by side). */
  namespace: string;
  /** Reuse a cache directory (a restart); default: a fresh one. */
  cacheDir?: string;
  /** Default 1s. */
  pollInterval?: string;
  /** More flags, e.g. ['--initial', 'apply']. Leader election is off unless these turn it on. */
  args?: string[];
  env?: Record<string, string>;
  logLevel?: string;
}

export interface JanusRunProcess {
  readonly child: ChildProcess;
  readonly cacheDir: string;
  readonly logFile: string;
  readonly exited: Promise<number | string>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<number | string>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<number | string>;
  logs(): Promise<string>;
  /** Where /metrics, /readyz and /webhook are served (read from the log). */
  opsUrl(): Promise<string>;
}

/** `node src/cli/main.ts <command> <args>`: the entry point that ships. */
function entryArgs(command: 'run' | 'validate', args: readonly string[]): string[] {
  return [...NODE_FLAGS, join(REPO_ROOT, 'src/cli/main.ts'), command, ...args];
}

export interface CommandResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a short-lived `janus <command>` to its end. */
export async function runJanusCommand(
  command: 'validate',
  args: readonly string[],
  opts: { cwd?: string; env?: Record<string, string> } = {},
): Promise<CommandResult> {
  const child = reapOnExit(
    spawn(process.execPath, entryArgs(command, args), {
      cwd: opts.cwd ?? REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...opts.env },
    }),
  );
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  return { code, stdout, stderr };
}

export async function startJanusRun(opts: JanusRunOptions): Promise<JanusRunProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'janus-run-'));
  const cacheDir = opts.cacheDir ?? join(dir, 'cache');
  const logFile = join(dir, 'janus.log');
  const log = createWriteStream(logFile);
  const args = [
    '--kubeconfig',
    opts.kubeconfig,
    '--repo',
    opts.repo,
    '--namespace',
    opts.namespace,
    '--default-namespace',
    opts.namespace,
    '--controller-namespace',
    'janus-system',
    '--cache-dir',
    cacheDir,
    '--poll-interval',
    opts.pollInterval ?? '1s',
    '--log-level',
    opts.logLevel ?? 'debug',
    '--metrics-bind-address',
    '127.0.0.1:0',
    ...(opts.args?.some((a) => a.startsWith('--leader')) ? [] : ['--no-leader-elect']),
    ...(opts.args ?? []),
  ];
  const child = reapOnExit(
    spawn(process.execPath, entryArgs('run', args), {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, KUBECONFIG: '', ...opts.env },
    }),
  );
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    cacheDir,
    logFile,
    exited,
    async stop() {
      if (running()) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (running()) child.kill('SIGKILL');
      return exited;
    },
    logs: () => readFile(logFile, 'utf8'),
    opsUrl: () =>
      eventually(async () => {
        const url = /"url":"(http:[^"]+)","msg":"operations server listening"/.exec(
          await readFile(logFile, 'utf8'),
        )?.[1];
        if (!url) throw new Error(`the operations server has not started yet (log: ${logFile})`);
        return url;
      }),
  };
}

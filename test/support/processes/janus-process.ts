/**
 * A long-running `janus <command>` as a separate process, started through the entry point that
 * ships, its output in a log file: what test/support/processes/controller-process.ts and janus-run.ts share.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT } from '../cluster/manifests.ts';
import { eventually } from '../eventually.ts';
import { SHIPPED_MAIN } from './build.ts';
import { reapOnExit } from './reap.ts';

export interface JanusProcess {
  readonly child: ChildProcess;
  readonly logFile: string;
  /** Resolves with the exit code (or the signal) when the process ends. */
  readonly exited: Promise<number | string>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<number | string>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<number | string>;
  logs(): Promise<string>;
  /** Where /metrics, /healthz, /readyz (and /webhook) are served (read from the log). */
  opsUrl(): Promise<string>;
}

/** `node dist/cli/launch.js <command> <args>` (built by buildDist): the image's entry point, which picks the Node flags. */
export function entryArgs(command: string, args: readonly string[], root = REPO_ROOT): string[] {
  return [join(root, SHIPPED_MAIN), command, ...args];
}

/**
 * `node <flags> dist/cli/main.js <command> <args>`: past the launcher, with exactly `nodeFlags`
 * (a benchmark weighing them; the launcher only ever adds its own).
 */
function argsWithNodeFlags(nodeFlags: readonly string[], command: string, args: readonly string[]): string[] {
  return [...nodeFlags, join(REPO_ROOT, 'dist/cli/main.js'), command, ...args];
}

/** Starts `janus <command> <args>`; stdout and stderr go to `logFile`. No ambient KUBECONFIG. */
export function spawnJanus(
  command: 'controller' | 'run',
  args: readonly string[],
  opts: {
    logFile: string;
    env?: Record<string, string> | undefined;
    nodeFlags?: readonly string[] | undefined;
    /** The checkout whose dist/ runs (a benchmark comparing two builds); default this one. */
    root?: string | undefined;
  },
): JanusProcess {
  const log = createWriteStream(opts.logFile);
  const argv = opts.nodeFlags
    ? argsWithNodeFlags(opts.nodeFlags, command, args)
    : entryArgs(command, args, opts.root);
  const child = reapOnExit(
    spawn(process.execPath, argv, {
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
    logFile: opts.logFile,
    exited,
    async stop() {
      if (running()) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (running()) child.kill('SIGKILL');
      return exited;
    },
    logs: () => readFile(opts.logFile, 'utf8'),
    opsUrl: () =>
      eventually(async () => {
        const url = /"url":"(http:[^"]+)","msg":"operations server listening"/.exec(
          await readFile(opts.logFile, 'utf8'),
        )?.[1];
        if (!url) throw new Error(`the operations server has not started yet (log: ${opts.logFile})`);
        return url;
      }),
  };
}

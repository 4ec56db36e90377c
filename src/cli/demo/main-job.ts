/**
 * `janus run` as a child process of the demo, exactly as an operator would start it. It runs in a
 * process group of its own so that Ctrl-C reaches only the demo, which then stops things in
 * order; a watchdog stops it too if the demo itself is killed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';

export interface MainJob {
  readonly pid: number | undefined;
  readonly args: readonly string[];
  /** Whether it is still running. */
  running(): boolean;
  /** Aborts when the process exits, for whatever reason. */
  readonly exitSignal: AbortSignal;
  /** SIGTERM (graceful: it finishes the current steps), SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
  /** The last lines of its log, for error messages. */
  tail(lines?: number): Promise<string>;
}

export function startMainJob(opts: { args: string[]; logFile: string; cwd: string }): MainJob {
  // The entry point that picks the Node flags: launch.ts from the sources, launch.js from a build.
  const launcher = join(import.meta.dirname, `../launch${extname(import.meta.filename)}`);
  const log = createWriteStream(opts.logFile);
  const child: ChildProcess = spawn(process.execPath, [launcher, 'run', ...opts.args], {
    cwd: opts.cwd,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, KUBECONFIG: '' },
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const watchdog = child.pid === undefined ? undefined : startWatchdog(child.pid);
  const exited = once(child, 'exit').then(() => undefined);
  const exit = new AbortController();
  void exited.then(() => exit.abort(new Error(`janus run exited (${child.exitCode ?? child.signalCode})`)));
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    pid: child.pid,
    args: ['run', ...opts.args],
    running,
    exitSignal: exit.signal,
    async stop(graceMs = 15_000) {
      if (running()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      watchdog?.kill('SIGKILL');
      log.end();
    },
    async tail(lines = 20) {
      const text = await readFile(opts.logFile, 'utf8').catch(() => '');
      return text.trimEnd().split('\n').slice(-lines).join('\n');
    },
  };
}

/** A detached shell that SIGTERMs `pid` once this process is gone (killed, crashed). */
function startWatchdog(pid: number): ChildProcess {
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -TERM ${pid} 2>/dev/null`;
  const watchdog = spawn('bash', ['-c', script], { stdio: 'ignore', detached: true });
  watchdog.unref();
  return watchdog;
}

/**
 * Runs `janus controller` as a separate process, as the controller identity (bound only by the
 * RBAC in manifests/), so tests exercise exactly what ships — and can kill it for real.
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

export interface ControllerProcess {
  readonly child: ChildProcess;
  readonly logFile: string;
  /** Resolves with the exit code (or the signal) when the process ends. */
  readonly exited: Promise<number | string>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<number | string>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<number | string>;
  logs(): Promise<string>;
  /** Where /metrics, /healthz and /readyz are served (read from the log). */
  opsUrl(): Promise<string>;
}

export interface ControllerProcessOptions {
  kubeconfig: string;
  /** Reconcile only this namespace (tests run side by side). */
  namespace?: string;
  extraArgs?: string[];
  env?: Record<string, string>;
  /** Default debug: tests read the per-request log lines. */
  logLevel?: string;
}

export async function startController(opts: ControllerProcessOptions): Promise<ControllerProcess> {
  const dir = await mkdtemp(join(tmpdir(), 'janus-controller-'));
  const logFile = join(dir, 'controller.log');
  const log = createWriteStream(logFile);
  const args = [
    ...NODE_FLAGS,
    join(REPO_ROOT, 'src/cli/main.ts'),
    'controller',
    '--kubeconfig',
    opts.kubeconfig,
    '--controller-namespace',
    'janus-system',
    '--log-level',
    opts.logLevel ?? 'debug',
    '--metrics-bind-address',
    '127.0.0.1:0',
    ...(opts.namespace ? ['--namespace', opts.namespace] : []),
    ...(opts.extraArgs ?? ['--no-leader-elect']),
  ];
  const child = reapOnExit(
    spawn(process.execPath, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, KUBECONFIG: '', ...opts.env },
    }),
  );
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<number | string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')),
  );
  return {
    child,
    logFile,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      return exited;
    },
    logs: () => readFile(logFile, 'utf8'),
    opsUrl: () =>
      eventually(async () => {
        const url = /"url":"(http:[^"]+)","msg":"operations server listening"/.exec(
          await readFile(logFile, 'utf8'),
        )?.[1];
        if (!url) throw new Error('the operations server has not started yet');
        return url;
      }),
  };
}

/** Runs the `janus` command line as a separate process, as a person or a CI job would. */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from '../cluster/manifests.ts';

export interface CliResult {
  /** Exit status, or the signal's name. */
  code: number | string;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  kubeconfig?: string;
  env?: Record<string, string>;
  cwd?: string;
}

export interface CliProcess {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  readonly exited: Promise<CliResult>;
}

/** Starts `janus <args>`; JANUS_* variables of the test's own environment are not passed on. */
export function startJanus(args: string[], opts: CliOptions = {}): CliProcess {
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith('JANUS_')),
  );
  env.KUBECONFIG = opts.kubeconfig ?? '';
  const child = spawn(process.execPath, [join(REPO_ROOT, 'src/cli/main.ts'), ...args], {
    cwd: opts.cwd ?? REPO_ROOT,
    env: { ...env, ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const exited = new Promise<CliResult>((resolve) =>
    child.once('close', (code, signal) => resolve({ code: code ?? signal ?? 'unknown', stdout, stderr })),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

export function janus(args: string[], opts: CliOptions = {}): Promise<CliResult> {
  return startJanus(args, opts).exited;
}

/** Several pretty-printed JSON documents one after the other (as `--watch -o json` prints them). */
export function parseJsonStream(text: string): unknown[] {
  return text
    .split(/\n(?=\{)/)
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => JSON.parse(chunk));
}

/**
 * Runs one render tool (kustomize, helm) as docs/sources.md's "The sandbox" says: argv without a
 * shell of ours, stdin closed, cwd the checkout, an environment of its own (a private HOME and
 * XDG/Helm folders, proxies pointing at a closed loopback port, a PATH with nothing on it: no
 * `git`, no plugin), an address-space limit set by `ulimit -v` in /bin/sh just before it execs
 * the tool, and a process group of its own that is killed whole at the time bound, past the
 * output bound, or when the caller aborts. stdout is the render; of stderr only the tail is kept.
 */
import { spawn } from 'node:child_process';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { addressSpaceLimit, type RenderLimits, RSS_POLL_MS, STDERR_TAIL_BYTES } from './limits.ts';

export interface SandboxRun {
  /** The tool's absolute path. */
  readonly program: string;
  readonly args: readonly string[];
  /** The checkout: the tool's working directory. */
  readonly cwd: string;
  /** A private, empty folder for the tool's HOME, caches and configuration. */
  readonly home: string;
  readonly limits: RenderLimits;
  readonly signal?: AbortSignal | undefined;
}

/** Why the sandbox stopped the tool. */
export type SandboxBound = 'time' | 'memory' | 'output';

export type SandboxOutcome =
  | { readonly ok: true; readonly stdout: Buffer; readonly stderr: string }
  | {
      readonly ok: false;
      /** The tool's exit code, or null when a signal ended it. */
      readonly exitCode: number | null;
      readonly stderr: string;
      readonly bound?: SandboxBound | undefined;
      /** The caller aborted the run. */
      readonly aborted?: boolean | undefined;
    };

/**
 * A loopback port nothing listens on (the discard service's, never served here): a tool that
 * tries the network anyway goes through the "proxy" and fails at once, without leaving the host.
 */
export const CLOSED_PROXY = 'http://127.0.0.1:9';

/** The environment of a sandboxed tool: nothing of Janus's own (no credentials, no kubeconfig). */
export function sandboxEnvironment(home: string, limits: RenderLimits): Record<string, string> {
  return {
    HOME: home,
    // Nothing on the PATH: the tools find no git (remote bases), no plugin, no shell.
    PATH: join(home, 'empty-path'),
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_CACHE_HOME: join(home, 'cache'),
    XDG_DATA_HOME: join(home, 'data'),
    HELM_CONFIG_HOME: join(home, 'config', 'helm'),
    HELM_CACHE_HOME: join(home, 'cache', 'helm'),
    HELM_DATA_HOME: join(home, 'data', 'helm'),
    HELM_PLUGINS: join(home, 'empty-plugins'),
    KUSTOMIZE_PLUGIN_HOME: join(home, 'empty-plugins'),
    HTTP_PROXY: CLOSED_PROXY,
    HTTPS_PROXY: CLOSED_PROXY,
    http_proxy: CLOSED_PROXY,
    https_proxy: CLOSED_PROXY,
    NO_PROXY: '',
    no_proxy: '',
    GOMEMLIMIT: String(limits.memoryBytes),
    LANG: 'C',
  };
}

/** The address-space limit of the tool's process, in KiB (ulimit -v's unit). */
export function addressSpaceKiB(limits: RenderLimits): number {
  return Math.ceil(addressSpaceLimit(limits.memoryBytes) / 1024);
}

/**
 * `ulimit -v` sets the soft and hard limits (dash and bash alike), so the tool cannot raise it;
 * then the shell replaces itself with the tool (same PID, same process group). The tool and its
 * arguments are positional parameters, never parsed by the shell.
 */
const LIMIT_THEN_EXEC = 'ulimit -v "$1" || exit 126; shift; exec "$@"';

/** Whether the Go runtime's words on stderr say it ran out of memory (the address-space limit). */
export function saysOutOfMemory(stderr: string): boolean {
  return /fatal error: (runtime: )?out of memory|runtime: cannot allocate memory|cannot allocate memory/.test(
    stderr,
  );
}

export async function runSandboxed(run: SandboxRun): Promise<SandboxOutcome> {
  const env = sandboxEnvironment(run.home, run.limits);
  for (const dir of [
    env.PATH,
    env.HELM_PLUGINS,
    env.HELM_CONFIG_HOME,
    env.HELM_CACHE_HOME,
    env.HELM_DATA_HOME,
  ])
    await mkdir(dir as string, { recursive: true, mode: 0o700 });
  if (run.signal?.aborted) return { ok: false, exitCode: null, stderr: '', aborted: true };
  return new Promise((resolve) => {
    const child = spawn(
      '/bin/sh',
      ['-c', LIMIT_THEN_EXEC, 'janus-render', String(addressSpaceKiB(run.limits)), run.program, ...run.args],
      { cwd: run.cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderrTail = Buffer.alloc(0);
    let bound: SandboxBound | undefined;
    let aborted = false;
    let settled = false;

    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const stop = (why: SandboxBound | 'abort') => {
      if (why === 'abort') aborted = true;
      else bound ??= why;
      killGroup();
    };
    const timer = setTimeout(() => stop('time'), run.limits.timeoutMs);
    const watch = setInterval(() => {
      if (child.pid === undefined) return;
      void residentBytes(child.pid).then((rss) => {
        if (rss !== undefined && rss > run.limits.memoryBytes && !settled) stop('memory');
      });
    }, RSS_POLL_MS);
    const onAbort = () => stop('abort');
    run.signal?.addEventListener('abort', onAbort, { once: true });

    child.stdout.on('data', (chunk: Buffer) => {
      if (bound !== undefined) return;
      stdoutBytes += chunk.length;
      if (stdoutBytes > run.limits.maxOutputBytes) {
        stdout.length = 0;
        stop('output');
        return;
      }
      stdout.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderrTail = Buffer.concat([stderrTail, chunk]);
      if (stderrTail.length > STDERR_TAIL_BYTES)
        stderrTail = stderrTail.subarray(stderrTail.length - STDERR_TAIL_BYTES);
    });

    const finish = (exitCode: number | null, error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearInterval(watch);
      run.signal?.removeEventListener('abort', onAbort);
      const stderr = error ? `${stderrTail.toString('utf8')}${error.message}` : stderrTail.toString('utf8');
      if (bound === undefined && exitCode !== 0 && saysOutOfMemory(stderr)) bound = 'memory';
      if (exitCode === 0 && bound === undefined && !aborted && !error) {
        resolve({ ok: true, stdout: Buffer.concat(stdout), stderr });
      } else {
        resolve({ ok: false, exitCode, stderr, bound, aborted: aborted || undefined });
      }
    };
    // The tool ended: whatever it left behind in its group goes with it (its pipes would keep
    // 'close' from coming), and its pid is no longer watched.
    child.on('exit', () => {
      clearInterval(watch);
      killGroup();
    });
    child.on('error', (error) => finish(null, error));
    child.on('close', (code) => finish(code));
  });
}

/** The resident memory of process `pid` (VmRSS), or undefined when it cannot be read (gone, no /proc). */
async function residentBytes(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kib = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    return kib === undefined ? undefined : Number(kib) * 1024;
  } catch {
    return undefined;
  }
}

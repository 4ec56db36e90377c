/**
 * The local control plane's processes: waiting for each to be ready (and reporting the end of
 * its log when it is not), stopping them, and a watchdog that stops them if we die first.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';

export async function waitFor(
  name: string,
  child: ChildProcess,
  dir: string,
  deadline: number,
  ready: () => Promise<boolean>,
): Promise<void> {
  let lastError = '';
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}):\n${await tail(dir, name)}`);
    }
    try {
      if (await ready()) return;
    } catch (e) {
      lastError = (e as Error).message; // not listening yet, or certificate not written yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${name} was not ready in time (${lastError}):\n${await tail(dir, name)}`);
}

async function tail(dir: string, name: string): Promise<string> {
  const text = await readFile(join(dir, `${name}.log`), 'utf8').catch(() => '');
  return text.split('\n').slice(-40).join('\n');
}

export async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

/**
 * A detached shell that outlives us only to clean up: it reads child PIDs on stdin and, when
 * our process is gone (killed, crashed, Ctrl-C during setup), kills them and removes the folder.
 */
export function startWatchdog(dir: string): ChildProcess {
  const script = `
    pids=""
    while kill -0 ${process.pid} 2>/dev/null; do
      if read -t 1 pid; then pids="$pids $pid"; else sleep 1; fi
    done
    if [ -n "$pids" ]; then kill -TERM $pids 2>/dev/null; sleep 3; kill -KILL $pids 2>/dev/null; fi
    rm -rf '${dir}'`;
  const child = spawn('bash', ['-c', script], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  child.unref();
  return child;
}

export async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const s = createServer();
          s.once('error', reject);
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => {
    const addr = s.address();
    if (!addr || typeof addr === 'string') throw new Error('no port');
    return addr.port;
  });
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  return ports;
}

/** CPU time and memory of processes, from /proc: where a benchmark's work was done, whatever the wall clock. */
import { readFile } from 'node:fs/promises';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICKS = 100;

/** User plus system CPU seconds used so far by `pid`; 0 once it has gone. */
export async function cpuSeconds(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is the 1st, utime the 12th, stime the 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** CPU seconds each named process uses from now until `stop()` is called. */
export async function cpuMeter(
  processes: Record<string, number>,
): Promise<{ stop(): Promise<Record<string, number>> }> {
  const start = Object.fromEntries(
    await Promise.all(
      Object.entries(processes).map(async ([name, pid]) => [name, await cpuSeconds(pid)] as const),
    ),
  );
  return {
    async stop() {
      const used: Record<string, number> = {};
      for (const [name, pid] of Object.entries(processes))
        used[name] = (await cpuSeconds(pid)) - (start[name] ?? 0);
      return used;
    },
  };
}

/**
 * In MiB, from /proc/<pid>/status: VmRSS, resident now; VmHWM, the most it has been resident;
 * RssFile, the resident pages of files (mostly the program's own code); RssAnon, the rest.
 */
export async function memoryMiB(
  pid: number,
  field: 'VmRSS' | 'VmHWM' | 'RssFile' | 'RssAnon' = 'VmRSS',
): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0) / 1024;
}

/** What a process started with INSPECTABLE in its environment needs to answer liveHeapMiB. */
export const INSPECTABLE = { NODE_OPTIONS: '--inspect-port=0' };

/**
 * The V8 heap `pid` holds after a full collection, in MiB: what it keeps alive, whatever garbage
 * its start left for a later collection (resident memory counts that too). Read through the
 * inspector, which SIGUSR1 opens; a process started with INSPECTABLE opens it on a free port of
 * 127.0.0.1 and says which on stderr, that `logs` returns.
 */
export async function liveHeapMiB(pid: number, logs: () => Promise<string>): Promise<number> {
  process.kill(pid, 'SIGUSR1');
  let url: string | undefined;
  for (let i = 0; i < 200 && !url; i++) {
    url = /Debugger listening on (ws:\/\/\S+)/.exec(await logs())?.[1];
    if (!url) await new Promise((r) => setTimeout(r, 50));
  }
  if (!url) throw new Error(`process ${pid} did not open its inspector`);
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', reject, { once: true });
  });
  let next = 0;
  const call = (method: string) =>
    new Promise<Record<string, number>>((resolve) => {
      const id = ++next;
      const answer = (event: MessageEvent) => {
        const message = JSON.parse(String(event.data)) as { id?: number; result?: Record<string, number> };
        if (message.id !== id) return;
        socket.removeEventListener('message', answer);
        resolve(message.result ?? {});
      };
      socket.addEventListener('message', answer);
      socket.send(JSON.stringify({ id, method }));
    });
  try {
    await call('HeapProfiler.collectGarbage');
    return ((await call('Runtime.getHeapUsage')).usedSize ?? 0) / 2 ** 20;
  } finally {
    socket.close();
  }
}

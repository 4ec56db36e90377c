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

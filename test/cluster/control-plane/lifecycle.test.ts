/** No control-plane process outlives the run: not after stop(), not after its starter is killed. */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { describe, expect, inject, it } from 'vitest';
import { eventually } from '../../support/eventually.ts';

const fixture = new URL('../../support/cluster/hold-control-plane.ts', import.meta.url).pathname;
const info = inject('kube');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function startHolder(mode: 'stop' | 'hold') {
  const child = spawn(process.execPath, [fixture, info.binDir ?? '', mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`holder exited with ${code} before starting`)));
  });
  const { pids, dir } = JSON.parse(first) as { pids: number[]; dir: string };
  return { child, pids, dir };
}

describe.runIf(info.local)('control-plane lifecycle', () => {
  it('stop() ends etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok and removes the folder', async () => {
    const { child, pids, dir } = await startHolder('stop');
    expect(pids).toHaveLength(5);
    await new Promise((resolve) => child.once('exit', resolve));
    expect(pids.filter(alive)).toEqual([]);
    expect(existsSync(dir)).toBe(false);
  });

  it('the watchdog ends them when the process that started them is killed', async () => {
    const { child, pids, dir } = await startHolder('hold');
    expect(pids.filter(alive)).toHaveLength(5);
    child.kill('SIGKILL');
    await eventually(() => expect(pids.filter(alive)).toEqual([]), { timeoutMs: 60_000, intervalMs: 250 });
    await eventually(() => expect(existsSync(dir)).toBe(false), { timeoutMs: 30_000 });
  });
});

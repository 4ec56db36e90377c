/**
 * Two builds of the control plane never clobber each other: build.sh takes a lock on its cache
 * (lib.sh's reuse_or_lock, which every build script shares),
 * and whoever waited for it finds the build done instead of building (and removing) it again.
 * The binaries here are stand-ins, so no Go build runs; the lock and the re-check are real.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../support/cluster/manifests.ts';
import { eventually } from '../../support/eventually.ts';
import { janus } from '../../support/processes/cli.ts';

const BUILD = join(REPO_ROOT, 'test/kube-testenv/build.sh');
const scratch: string[] = [];
const children: Array<() => void> = [];

afterEach(async () => {
  for (const kill of children.splice(0)) kill();
  for (const dir of scratch.splice(0)) await rm(dir, { recursive: true, force: true });
});

function run(cmd: string, args: string[], env: Record<string, string>) {
  // A process group of its own, so ending it ends whatever it started (flock's sleep holds the lock too).
  const child = spawn(cmd, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stderr = '';
  let stdout = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  child.stdout?.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  // 'close', not 'exit': only then has all of its output been read (CI once saw the exit first).
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const kill = () => {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  children.push(kill);
  return { exited, kill, stderr: () => stderr, stdout: () => stdout };
}

describe('test/kube-testenv/build.sh', () => {
  it('waits for a build in progress and then finds it done, building nothing itself', async () => {
    const cache = await mkdtemp(join(tmpdir(), 'janus-build-lock-'));
    scratch.push(cache);
    const out = join(cache, 'out', 'bin');
    const env = { JANUS_CACHE_DIR: cache, JANUS_KUBE_BIN: out };
    // "Another build": holds the lock until told to stop.
    await mkdir(join(cache, 'kube-testenv'), { recursive: true });
    const holder = run('flock', [join(cache, 'kube-testenv', '.build.lock'), 'sleep', '600'], {});
    const waiter = run('bash', [BUILD], env);
    await eventually(() => expect(waiter.stderr()).toContain('kube-testenv: another build is running'));
    // The other build finishes: its binaries appear, complete, and it lets go of the lock.
    await mkdir(out, { recursive: true });
    for (const bin of [
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
      'etcd',
      'kubectl',
      'kwok',
      'helm',
    ]) {
      await writeFile(join(out, bin), '#!/bin/sh\n');
      await chmod(join(out, bin), 0o755);
    }
    await writeFile(join(out, '.complete'), '');
    holder.kill();
    await holder.exited;
    expect(await waiter.exited).toBe(0);
    expect(waiter.stderr()).toContain('up to date');
    expect(waiter.stderr()).not.toContain('building');
    expect(waiter.stdout().trim()).toBe(out);
  });

  it('janus demo rejects a bad --timeout before it builds or starts anything', async () => {
    const result = await janus(['demo', '--timeout', '0s']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--timeout 0s: must be more than 0s');
    expect(result.stderr).not.toContain('kube-testenv');
  });
});

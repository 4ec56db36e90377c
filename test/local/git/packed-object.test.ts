/**
 * Whole objects read straight from a pack (packed-object.ts, tree-parse.ts): every object of a
 * repository packed with deep delta chains (both OFS_DELTA and REF_DELTA) reads exactly as
 * isomorphic-git reads it; a size limit is answered from the headers; what is not packed is
 * left to the caller.
 */
import fs, { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { afterAll, describe, expect, it } from 'vitest';
import { ObjectReadCache } from '../../../src/git/object-read-cache.ts';
import { ObjectStore } from '../../../src/git/object-store.ts';
import { PackedObjects } from '../../../src/git/packed-object.ts';
import { parseTree } from '../../../src/git/tree-parse.ts';
import { gitSync } from '../../support/git/git-server.ts';

const scratch = mkdtempSync(join(tmpdir(), 'janus-packed-object-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const run = gitSync;

/** Files edited over many commits, so `git repack` stores most versions as deltas. */
function repository(name: string, config: string[]): string {
  const dir = join(scratch, name);
  run(scratch, 'init', '--quiet', '--initial-branch=main', dir);
  const lines = Array.from({ length: 300 }, (_, i) => `line ${i}: ${'x'.repeat(i % 40)}`);
  for (let version = 0; version < 30; version++) {
    lines[(version * 37) % lines.length] = `edited in version ${version}`;
    writeFileSync(join(dir, 'a.yaml'), lines.join('\n'));
    writeFileSync(join(dir, `file-${version % 5}.txt`), `${lines.slice(version).join('\n')}\n`);
    writeFileSync(join(dir, 'ünïcode-𝒳.txt'), `version ${version}`);
    run(dir, 'add', '--all');
    run(dir, 'commit', '--quiet', '-m', `version ${version}`);
  }
  run(dir, ...config, 'repack', '--quiet', '-adf', '--depth=50', '--window=50');
  run(dir, 'prune-packed');
  return join(dir, '.git');
}

const oids = (gitdir: string) =>
  run(gitdir, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype) %(objectsize)')
    .split('\n')
    .map((line) => line.split(' '))
    .map(([oid = '', type = '', size = '']) => ({ oid, type, size: Number(size) }));

describe('PackedObjects', () => {
  for (const [label, config] of [
    ['offset deltas', []],
    ['reference deltas', ['-c', 'repack.useDeltaBaseOffset=false']],
  ] as const) {
    it(`reads every object of a pack of ${label} as isomorphic-git does`, async () => {
      const gitdir = repository(label.replace(' ', '-'), [...config]);
      const index = fs.readdirSync(join(gitdir, 'objects', 'pack')).find((f) => f.endsWith('.idx')) ?? '';
      const verified = run(gitdir, 'verify-pack', '-v', join(gitdir, 'objects', 'pack', index));
      expect(verified).toMatch(/chain length = [5-9]/); // the fixture does have deep delta chains
      const reads = new ObjectReadCache(gitdir);
      const packed = new PackedObjects(reads);
      const store = new ObjectStore(gitdir);
      try {
        for (const { oid, type, size } of oids(gitdir)) {
          const object = await packed.read(oid, Number.POSITIVE_INFINITY);
          const expected = await git.readObject({ fs, gitdir, oid, format: 'content' });
          expect(object?.type).toBe(type);
          expect(object?.size).toBe(size);
          expect(
            Buffer.compare(object?.content ?? Buffer.alloc(0), Buffer.from(expected.object as Uint8Array)),
          ).toBe(0);
          if (type === 'tree') {
            expect(await store.readTree(oid)).toEqual((await git.readTree({ fs, gitdir, oid })).tree);
          }
        }
      } finally {
        await reads.close();
        await store.close();
      }
    });
  }

  it('answers an object larger than asked for with its size alone, delta or not, kept as a base or not', async () => {
    const gitdir = repository('limits', []);
    const reads = new ObjectReadCache(gitdir);
    const packed = new PackedObjects(reads);
    try {
      const blobs = oids(gitdir).filter((o) => o.type === 'blob');
      // Read whole first, so the bases of the delta chains are kept: a kept base is still limited.
      for (const { oid } of blobs) await packed.read(oid, Number.POSITIVE_INFINITY);
      for (const { oid, type, size } of blobs) {
        const object = await packed.read(oid, size - 1);
        expect(object?.content).toBeUndefined();
        expect(object?.size).toBe(size);
        expect([type, undefined]).toContain(object?.type);
      }
    } finally {
      await reads.close();
    }
  });

  it('answers a blob of 64 MiB of zeros (64 KiB packed) from its header, reading no more of the pack', async () => {
    const dir = join(scratch, 'bomb');
    run(scratch, 'init', '--quiet', '--initial-branch=main', dir);
    writeFileSync(join(dir, 'zeros'), Buffer.alloc(64 * 1024 * 1024));
    run(dir, 'add', '--all');
    run(dir, 'commit', '--quiet', '-m', 'zeros');
    run(dir, 'repack', '--quiet', '-adf');
    run(dir, 'prune-packed');
    const gitdir = join(dir, '.git');
    const blob = oids(gitdir).find((o) => o.type === 'blob');
    const lengths: number[] = [];
    const reads = new (class extends ObjectReadCache {
      override readPack(path: string, position: number, length: number): Promise<Buffer> {
        lengths.push(length);
        return super.readPack(path, position, length);
      }
    })(gitdir);
    try {
      const object = await new PackedObjects(reads).read(blob?.oid ?? '', 1024 * 1024);
      expect(object).toEqual({ type: 'blob', size: 64 * 1024 * 1024 });
      expect(Math.max(...lengths)).toBeLessThanOrEqual(16 * 1024); // before: the whole 64 MiB bound
    } finally {
      await reads.close();
    }
  });

  it('leaves a loose object to the caller', async () => {
    const gitdir = repository('loose', []);
    const blob = run(gitdir, 'hash-object', '-w', '--stdin');
    const reads = new ObjectReadCache(gitdir);
    try {
      expect(await new PackedObjects(reads).read(blob, 1000)).toBeUndefined();
    } finally {
      await reads.close();
    }
  });
});

describe('parseTree', () => {
  const entry = (mode: string, name: string, fill: number) =>
    Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.alloc(20, fill)]);

  it('sorts entries by code point and names modes as isomorphic-git does', () => {
    const tree = Buffer.concat([
      entry('100644', 'b', 1),
      entry('40000', 'a', 2),
      entry('100644', '𝒳', 3),
      entry('100644', '\uFFFD', 4),
    ]);
    expect(parseTree(tree)).toEqual([
      { mode: '040000', path: 'a', oid: '02'.repeat(20), type: 'tree' },
      { mode: '100644', path: 'b', oid: '01'.repeat(20), type: 'blob' },
      { mode: '100644', path: '\uFFFD', oid: '04'.repeat(20), type: 'blob' },
      { mode: '100644', path: '𝒳', oid: '03'.repeat(20), type: 'blob' },
    ]);
  });

  it('refuses what isomorphic-git refuses: unsafe names, unknown modes, a cut entry', () => {
    for (const name of ['..', '.git', '.GIT.', 'git~1', 'a/b', '.git::$INDEX_ALLOCATION', '.g\u200Cit'])
      expect(parseTree(entry('100644', name, 1))).toBeUndefined();
    expect(parseTree(entry('100600', 'a', 1))).toBeUndefined();
    expect(parseTree(entry('100644', 'a', 1).subarray(0, 20))).toBeUndefined();
  });
});

/**
 * Object sizes read from Git's headers, without inflating: the same as `git cat-file -s` for
 * every object, whether loose, packed whole, packed as a delta (by offset or by oid), or indexed
 * with 64-bit offsets; and an oversized blob is refused without being read.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readObjectSize } from '../../../src/git/object-size.ts';
import { ObjectStore } from '../../../src/git/object-store.ts';
import { git } from '../../support/git/git-server.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'janus-object-size-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** A repository whose blobs delta well against each other: each version edits the last. */
async function repository(): Promise<string> {
  const dir = await mkdtemp(join(scratch, 'repo-'));
  await git(dir, 'init', '--quiet', '--initial-branch=main');
  let text = Array.from({ length: 2000 }, (_, i) => `line ${i}: ${randomBytes(8).toString('hex')}`).join(
    '\n',
  );
  for (let version = 0; version < 5; version++) {
    text = `${text}\nversion ${version}`;
    await writeFile(join(dir, 'config.yaml'), text);
    await writeFile(join(dir, 'zeros.bin'), Buffer.alloc(4 * 1024 * 1024 + version));
    await git(dir, 'add', '--all');
    await git(dir, 'commit', '--quiet', '-m', `version ${version}`);
  }
  return dir;
}

/** Every object's oid and size as native git sees them. */
async function expectedSizes(dir: string): Promise<Map<string, number>> {
  const out = await git(dir, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objectsize)');
  return new Map(
    out.split('\n').map((line) => {
      const [oid, size] = line.split(' ');
      return [oid ?? '', Number(size)];
    }),
  );
}

async function readAll(dir: string): Promise<Map<string, number | undefined>> {
  const gitdir = join(dir, '.git');
  const sizes = new Map<string, number | undefined>();
  for (const oid of (await expectedSizes(dir)).keys()) sizes.set(oid, await readObjectSize(gitdir, oid));
  return sizes;
}

async function packTypes(dir: string): Promise<string> {
  const pack = (await readdir(join(dir, '.git/objects/pack'))).find((f) => f.endsWith('.idx'));
  return git(dir, 'verify-pack', '-v', join('.git/objects/pack', pack ?? ''));
}

describe('object sizes from headers', () => {
  it('reads loose objects', async () => {
    const dir = await repository();
    expect(await readAll(dir)).toEqual(await expectedSizes(dir));
  });

  it('reads packed objects, whole and as offset deltas', async () => {
    const dir = await repository();
    await git(dir, 'repack', '-a', '-d', '-f', '--quiet');
    expect(await packTypes(dir)).toMatch(/ blob +\d+ \d+ \d+ \d+ [0-9a-f]{40}/); // a delta chain
    expect(await readAll(dir)).toEqual(await expectedSizes(dir));
  });

  it('reads deltas against a base named by oid, and 64-bit offsets', async () => {
    const dir = await repository();
    await git(dir, '-c', 'repack.useDeltaBaseOffset=false', 'repack', '-a', '-d', '-f', '--quiet');
    // Rewrite the index so that every object past offset 64 is in the 64-bit table.
    const pack = (await readdir(join(dir, '.git/objects/pack'))).find((f) => f.endsWith('.pack')) ?? '';
    const packPath = join(dir, '.git/objects/pack', pack);
    await rm(packPath.replace(/\.pack$/, '.idx'));
    await git(dir, 'index-pack', '--index-version=2,64', packPath);
    expect(await readAll(dir)).toEqual(await expectedSizes(dir));
  });

  it('says nothing about an object that is not there', async () => {
    const dir = await repository();
    expect(await readObjectSize(join(dir, '.git'), '0'.repeat(40))).toBeUndefined();
  });

  it('refuses an oversized blob from its header, without reading it', async () => {
    const dir = await repository();
    await git(dir, 'repack', '-a', '-d', '--quiet');
    const zeros = await git(dir, 'rev-parse', 'HEAD:zeros.bin');
    const small = await git(dir, 'rev-parse', 'HEAD:config.yaml');
    const store = new ObjectStore(join(dir, '.git'));
    const readBlob = vi.spyOn(store, 'readBlob');
    expect(await store.readBlobWithin(zeros, 1024 * 1024)).toEqual({ ok: false, size: 4 * 1024 * 1024 + 4 });
    expect(readBlob).not.toHaveBeenCalled();
    const content = await store.readBlobWithin(small, 1024 * 1024);
    expect(content.ok && new TextDecoder().decode(content.bytes)).toMatch(/version 4$/);
    // Both are packed: the small one is read straight from the pack (packed-object.ts), not
    // through isomorphic-git either.
    expect(readBlob).not.toHaveBeenCalled();
  });

  it('reads loose blobs whole or refuses them by size, small ones in one go', async () => {
    const dir = await repository();
    await writeFile(join(dir, 'small.yaml'), 'phase: Committed\n');
    await git(dir, 'add', 'small.yaml');
    await git(dir, 'commit', '--quiet', '-m', 'small');
    const small = await git(dir, 'rev-parse', 'HEAD:small.yaml');
    const config = await git(dir, 'rev-parse', 'HEAD:config.yaml');
    const zeros = await git(dir, 'rev-parse', 'HEAD:zeros.bin');
    const store = new ObjectStore(join(dir, '.git'));
    const readBlob = vi.spyOn(store, 'readBlob');
    const text = async (oid: string) => {
      const read = await store.readBlobWithin(oid, 1024 * 1024);
      return read.ok ? new TextDecoder().decode(read.bytes) : read.size;
    };
    expect(await text(small)).toBe('phase: Committed\n');
    expect(readBlob).not.toHaveBeenCalled();
    expect(await text(config)).toMatch(/version 4$/); // larger than one go: sized, then read
    expect(await text(zeros)).toBe(4 * 1024 * 1024 + 4);
    expect(await store.readBlobWithin(small, 4)).toEqual({ ok: false, size: 17 });
  });
});

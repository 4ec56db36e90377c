/**
 * Object headers read through one operation's cache (object-read-cache.ts): each pack is listed
 * and opened once and its handle kept until close(), which leaves no descriptor behind; an
 * object stored both loose and packed reads the same as either copy alone; a pack added during
 * the operation (a fetch) is found.
 */
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ObjectReadCache } from '../../../src/git/object-read-cache.ts';
import { readObjectSize, readObjectStart } from '../../../src/git/object-size.ts';
import { ObjectStore } from '../../../src/git/object-store.ts';
import { gitSync } from '../../support/git/git-server.ts';

const scratch = mkdtempSync(join(tmpdir(), 'janus-object-read-cache-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const git = gitSync;

/** Commits whose files delta against each other, all objects loose. */
function repository(name: string, versions = 4): string {
  const dir = join(scratch, name);
  git(scratch, 'init', '--quiet', '--initial-branch=main', dir);
  let text = Array.from({ length: 500 }, (_, i) => `line ${i} of ${name}`).join('\n');
  for (let version = 0; version < versions; version++) {
    text = `${text}\nversion ${version}`;
    writeFileSync(join(dir, 'config.yaml'), text);
    git(dir, 'add', '--all');
    git(dir, 'commit', '--quiet', '-m', `version ${version}\n\n${'long message '.repeat(200)}`);
  }
  return dir;
}

function oids(dir: string): string[] {
  return git(dir, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname)').split('\n');
}

/** Every object's size and first 100 bytes, read through one cache that is closed at the end. */
async function readAll(dir: string, list: string[]) {
  const cache = new ObjectReadCache(join(dir, '.git'));
  const answers = [];
  for (const oid of list) {
    const size = await readObjectSize(join(dir, '.git'), oid, cache);
    const start = await readObjectStart(join(dir, '.git'), oid, 100, cache);
    answers.push({ oid, size, start: start && { ...start, start: start.start.toString('latin1') } });
  }
  await cache.close();
  return answers;
}

function openDescriptors(): number {
  return readdirSync('/proc/self/fd').length;
}

describe('object reads through an operation cache', () => {
  it('opens each pack once, keeps its handle, and closes it at the end', async () => {
    const dir = repository('packed');
    git(dir, 'repack', '-a', '-d', '-f', '--quiet');
    const gitdir = join(dir, '.git');
    const before = openDescriptors();
    const store = new ObjectStore(gitdir);
    const cache = new ObjectReadCache(gitdir);
    for (const oid of oids(dir)) {
      expect(await readObjectSize(gitdir, oid, cache)).toBe(Number(git(dir, 'cat-file', '-s', oid)));
      expect(await store.objectSize(oid)).toBe(Number(git(dir, 'cat-file', '-s', oid)));
    }
    expect(cache.openPacks).toBe(1);
    expect(openDescriptors()).toBe(before + 2); // the cache's pack and the store's
    await cache.close();
    await store.close();
    expect(cache.openPacks).toBe(0);
    expect(openDescriptors()).toBe(before);
    // A store kept past its operation still reads, and keeps nothing open.
    const [first] = oids(dir);
    expect(await store.objectSize(first ?? '')).toBe(Number(git(dir, 'cat-file', '-s', first ?? '')));
    expect(openDescriptors()).toBe(before);
  });

  it('gives the same answers for objects both loose and packed as for either copy alone', async () => {
    const loose = repository('both');
    const packed = join(scratch, 'both-packed');
    cpSync(loose, packed, { recursive: true });
    git(packed, 'repack', '-a', '-d', '-f', '--quiet');
    const both = join(scratch, 'both-twice');
    cpSync(packed, both, { recursive: true });
    cpSync(join(loose, '.git/objects'), join(both, '.git/objects'), { recursive: true });
    const list = oids(loose);
    const fromLoose = await readAll(loose, list);
    expect(fromLoose.every((a) => a.start !== undefined)).toBe(true);
    expect(git(packed, 'count-objects', '-v')).toMatch(/^count: 0$/m); // packed only
    const fromPack = await readAll(packed, list);
    // Deltas in the pack have no start without their base; whole objects read the same.
    expect(fromPack.some((a) => a.start === undefined)).toBe(true);
    expect(
      fromPack.map((a) => ({ ...a, start: a.start ?? fromLoose.find((l) => l.oid === a.oid)?.start })),
    ).toEqual(fromLoose);
    expect(await readAll(both, list)).toEqual(fromLoose);
  });

  it('finds objects in a pack added after the listing, and says nothing of absent ones', async () => {
    const dir = repository('fetched', 2);
    git(dir, 'repack', '-a', '-d', '--quiet');
    const gitdir = join(dir, '.git');
    const cache = new ObjectReadCache(gitdir);
    const head = git(dir, 'rev-parse', 'HEAD');
    expect(await readObjectSize(gitdir, head, cache)).toBe(Number(git(dir, 'cat-file', '-s', head)));
    writeFileSync(join(dir, 'new.yaml'), 'kind: ConfigMap\n');
    git(dir, 'add', '--all');
    git(dir, 'commit', '--quiet', '-m', 'later');
    git(dir, 'repack', '-d', '--quiet'); // a second pack; the new loose objects go
    expect(readdirSync(join(gitdir, 'objects/pack')).filter((f) => f.endsWith('.idx'))).toHaveLength(2);
    const blob = git(dir, 'rev-parse', 'HEAD:new.yaml');
    expect(await readObjectSize(gitdir, blob, cache)).toBe(16);
    expect(await readObjectStart(gitdir, blob, 100, cache)).toEqual({
      type: 'blob',
      size: 16,
      start: Buffer.from('kind: ConfigMap\n'),
    });
    expect(await readObjectSize(gitdir, '0'.repeat(40), cache)).toBeUndefined();
    await cache.close();
  });
});

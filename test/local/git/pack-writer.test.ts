/**
 * The packs a push sends (pack-writer.ts), judged by git itself: `git index-pack --strict` and
 * `git verify-pack` accept them, and `git cat-file` reads every object back, byte for byte.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { entryHeader, type PackObject, writePack } from '../../../src/git/pack-writer.ts';

const scratch = mkdtempSync(join(tmpdir(), 'janus-pack-writer-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: scratch };
const run = (dir: string, ...args: string[]): Buffer =>
  execFileSync('git', args, { cwd: dir, env: ENV, maxBuffer: 16 * 1024 * 1024 });

function oidOf({ type, content }: PackObject): string {
  return createHash('sha1')
    .update(Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]))
    .digest('hex');
}

/** Blobs at the edges of the size header's bytes, a tree holding them, a commit of that tree. */
function objects(): PackObject[] {
  const sizes = [0, 1, 15, 16, 127, 2047, 2048, 262_143, 262_144, 1_500_000];
  const blobs: PackObject[] = sizes.map((size, i) => ({
    type: 'blob',
    content: i % 2 ? randomBytes(size) : Buffer.alloc(size, 'y'),
  }));
  const tree: PackObject = {
    type: 'tree',
    content: Buffer.concat(
      blobs.map((blob, i) =>
        Buffer.concat([
          Buffer.from(`100644 file-${String(i).padStart(2, '0')}\0`),
          Buffer.from(oidOf(blob), 'hex'),
        ]),
      ),
    ),
  };
  const who = 'Janus <janus@tx.janus.io> 1700000000 +0000';
  const commit: PackObject = {
    type: 'commit',
    content: Buffer.from(`tree ${oidOf(tree)}\nauthor ${who}\ncommitter ${who}\n\nresults\n`),
  };
  return [commit, tree, ...blobs];
}

describe('writePack', () => {
  it('writes a pack git indexes, verifies and reads every object of, byte for byte', () => {
    const repo = join(scratch, 'repo.git');
    run(scratch, 'init', '--quiet', '--bare', repo);
    const all = objects();
    const pack = join(repo, 'objects', 'pack', 'pack-test.pack');
    writeFileSync(pack, Buffer.concat(writePack(all)));
    run(repo, 'index-pack', '--strict', pack);
    const verified = run(repo, 'verify-pack', '-v', pack.replace(/\.pack$/, '.idx')).toString('utf8');
    for (const object of all) {
      const oid = oidOf(object);
      expect(verified).toContain(`${oid} ${object.type}`);
      expect(run(repo, 'cat-file', '-t', oid).toString('utf8').trim()).toBe(object.type);
      expect(run(repo, 'cat-file', object.type, oid).equals(Buffer.from(object.content))).toBe(true);
    }
    expect(run(repo, 'fsck', '--strict', '--no-dangling').toString('utf8')).toBe('');
  });

  it('writes an empty pack git accepts', () => {
    const repo = join(scratch, 'empty.git');
    run(scratch, 'init', '--quiet', '--bare', repo);
    const pack = join(repo, 'objects', 'pack', 'pack-empty.pack');
    writeFileSync(pack, Buffer.concat(writePack([])));
    run(repo, 'index-pack', pack);
    expect(run(repo, 'count-objects', '-v').toString('utf8')).toContain('in-pack: 0');
  });
});

describe('entryHeader', () => {
  it('puts the type in bits 6-4 and the size in 4 bits, then 7 bits a byte', () => {
    expect([...entryHeader(3, 0)]).toEqual([0x30]);
    expect([...entryHeader(3, 15)]).toEqual([0x3f]);
    expect([...entryHeader(3, 16)]).toEqual([0xb0, 0x01]);
    expect([...entryHeader(1, 2047)]).toEqual([0x9f, 0x7f]);
    expect([...entryHeader(2, 2048)]).toEqual([0xa0, 0x80, 0x01]);
  });
});

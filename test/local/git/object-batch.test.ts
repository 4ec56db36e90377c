/**
 * ObjectBatch (the results writer's objects, hashed and compressed in memory, written at once)
 * against isomorphic-git's writers and git itself: the same ids, byte for byte, and objects that
 * git reads.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Signature } from '../../../src/git/commit-info.ts';
import { ObjectBatch } from '../../../src/git/object-batch.ts';
import { ObjectStore } from '../../../src/git/object-store.ts';
import { type TreeStore, writeFiles } from '../../../src/git/tree-writer.ts';
import { git } from '../../support/git/git-server.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'janus-test-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

async function bareRepository(name: string): Promise<ObjectStore> {
  const gitdir = join(scratch, name);
  await git(scratch, 'init', '--quiet', '--bare', gitdir);
  return new ObjectStore(gitdir);
}

/** Record i: files into folders that grow and are rewritten, names that sort next to folders. */
const record = (i: number): Record<string, string> => ({
  [`results/ns-${i % 3}/txn-${i}.yaml`]: 'phase: Pending\n',
  [`results/ns-${i % 3}/txn-${Math.floor(i / 2)}.yaml`]: `phase: Committed ${i}\n`,
  'results/index.yaml': `last: ${i}\n`,
  [`results/ns-${i % 3}.d/x`]: 'a file whose folder sorts before ns-N/\n',
  [`results/ns-${i % 3}-/x`]: 'and one after\n',
  [`results/ünï/${i % 2 ? '😀' : 'ｚ'}.yaml`]: 'names beyond ASCII, one outside the BMP\n',
});
const RECORDS = 12;

/** Commits the records one on top of the other; returns the commit ids. */
async function commits(
  store: TreeStore & Pick<ObjectStore, 'writeCommit'>,
  signature: (i: number) => Signature,
  message: (i: number) => string,
): Promise<string[]> {
  const oids: string[] = [];
  let tree: string | undefined;
  for (let i = 0; i < RECORDS; i++) {
    tree = await writeFiles(store, tree, record(i));
    oids.push(
      await store.writeCommit({
        tree,
        parents: oids.slice(-1),
        message: message(i),
        author: signature(i),
        committer: signature(i + 1),
      }),
    );
  }
  return oids;
}

const signature = (i: number): Signature => ({
  name: 'Janus',
  email: 'janus@tx.janus.io',
  timestamp: 1_700_000_000 + i,
  timezoneOffset: [0, -0, 60, -330, 125][i % 5] ?? 0,
});
const message = (i: number) =>
  [`default/txn-${i}: Pending\n\nJanus-Result: r-${i}\n`, '\n\nleading newlines\r\n\r\n', 'no newline'][
    i % 3
  ] ?? '';

describe('ObjectBatch', () => {
  it('writes the objects isomorphic-git writes, with the same ids, and git reads them', async () => {
    const store = await bareRepository('reference.git');
    const expected = await commits(store, signature, message);

    const batched = await bareRepository('batched.git');
    const batch = new ObjectBatch(batched);
    const written = await commits(batch, signature, message);
    expect(written).toEqual(expected);
    expect((await readdir(join(batched.gitdir, 'objects'))).sort()).toEqual(['info', 'pack']); // nothing before flush
    await batch.flush();

    const tip = written.at(-1) ?? '';
    const gitdir = ['--git-dir', batched.gitdir];
    expect(await git(scratch, ...gitdir, 'fsck', '--no-progress', '--no-dangling', '--strict')).toBe('');
    expect(await git(scratch, ...gitdir, 'rev-list', '--count', tip)).toBe(String(RECORDS));
    expect(await git(scratch, ...gitdir, 'show', `${tip}:results/ns-2/txn-5.yaml`)).toBe(
      'phase: Committed 11',
    );
    expect(await git(scratch, ...gitdir, 'log', '-1', '--format=%B', written[1] ?? '')).toBe(
      'leading newlines',
    );
    // What it wrote is read back by isomorphic-git too (a later batch builds on it).
    expect((await batched.readCommit(tip)).parents).toEqual([written.at(-2)]);
  });

  it('keeps an object the gitdir already has, and leaves no temporary file', async () => {
    const store = await bareRepository('again.git');
    const first = new ObjectBatch(store);
    const tree = await writeFiles(first, undefined, record(0));
    await first.flush();
    const second = new ObjectBatch(store);
    expect(await writeFiles(second, undefined, record(0))).toBe(tree);
    await second.flush();
    const folders = await readdir(join(store.gitdir, 'objects'));
    const files = (await Promise.all(folders.map((f) => readdir(join(store.gitdir, 'objects', f))))).flat();
    expect(files.filter((f) => f.startsWith('tmp_obj_'))).toEqual([]);
    expect(await git(scratch, '--git-dir', store.gitdir, 'fsck', '--no-progress', '--strict')).toContain(
      'dangling tree',
    );
  });
});

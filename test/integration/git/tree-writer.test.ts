/**
 * writeFiles over a batch (commit-records.ts): the trees a batch wrote are taken from memory, not
 * read back. What it commits must be what reading them back would have committed, and what git
 * itself reads.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectStore } from '../../../src/git/object-store.ts';
import { type WrittenTrees, writeFiles } from '../../../src/git/tree-writer.ts';
import { git } from '../../support/git-server.ts';

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'janus-test-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/** Record i of a batch: files into folders that grow and are rewritten. */
const record = (i: number): Record<string, string> => ({
  [`results/ns-${i % 3}/txn-${i}.yaml`]: `phase: Pending\n`,
  [`results/ns-${i % 3}/txn-${Math.floor(i / 2)}.yaml`]: `phase: Committed ${i}\n`,
  'results/index.yaml': `last: ${i}\n`,
  [`results/ns-${i % 3}.d/x`]: 'a name that sorts next to a folder\n',
});
const RECORDS = 30;

/** The tree after each record, written one on top of the other. */
async function trees(store: ObjectStore, written: () => WrittenTrees): Promise<string[]> {
  const oids: string[] = [];
  let tree: string | undefined;
  for (let i = 0; i < RECORDS; i++) {
    tree = await writeFiles(store, tree, record(i), written());
    oids.push(tree);
  }
  return oids;
}

describe('writeFiles with the trees of its batch', () => {
  it('writes the same trees as reading each base back, and git reads them whole', async () => {
    const gitdir = join(scratch, 'repo.git');
    await git(scratch, 'init', '--quiet', '--bare', gitdir);
    const store = new ObjectStore(gitdir);
    const batch: WrittenTrees = new Map();
    const remembered = await trees(store, () => batch);
    const readBack = await trees(store, () => new Map());
    expect(remembered).toEqual(readBack);
    const tip = remembered.at(-1) ?? '';
    expect(await git(scratch, '--git-dir', gitdir, 'show', `${tip}:results/ns-2/txn-14.yaml`)).toBe(
      'phase: Committed 29',
    );
    const paths = new Set(Array.from({ length: RECORDS }, (_, i) => Object.keys(record(i))).flat());
    const listed = await git(scratch, '--git-dir', gitdir, 'ls-tree', '-r', '--name-only', tip);
    expect(listed.split('\n')).toEqual([...paths].sort());
    expect(await git(scratch, '--git-dir', gitdir, 'fsck', '--no-progress', '--no-dangling')).toBe('');
  });
});

/**
 * Commits and trees read within GIT_INPUT_LIMITS, against what isomorphic-git and native git read
 * whole: a commit larger than the read limit has the same headers (loose or packed), its message
 * cut and marked; a tree larger than its limit is refused from its header.
 */
import fs from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import git from 'isomorphic-git';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRUNCATED_MESSAGE } from '../../../src/git/commit-head.ts';
import { GitObjectTooLargeError } from '../../../src/git/input-limits.ts';
import { ObjectStore } from '../../../src/git/object-store.ts';
import { git as nativeGit } from '../../support/git/git-server.ts';
import { hugeTree } from '../../support/git/hostile-git.ts';

let dir: string;
let big: string;
let small: string;
const message = `subject\n\n${'long body line\n'.repeat(10_000)}`; // 140 KiB

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'janus-bounded-objects-'));
  await nativeGit(dir, 'init', '--quiet', '--initial-branch=main');
  await writeFile(join(dir, 'a.txt'), 'a\n');
  await nativeGit(dir, 'add', '--all');
  await nativeGit(dir, 'commit', '--quiet', '-m', 'small');
  small = await nativeGit(dir, 'rev-parse', 'HEAD');
  await writeFile(join(dir, 'msg'), message);
  await nativeGit(dir, 'commit', '--quiet', '--allow-empty', '-F', 'msg');
  big = await nativeGit(dir, 'rev-parse', 'HEAD');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function expectSameHeaders(): Promise<void> {
  const store = new ObjectStore(join(dir, '.git'));
  const bounded = await store.readCommit(big);
  const { commit: whole } = await git.readCommit({ fs, dir, oid: big });
  expect(bounded).toEqual({
    oid: big,
    tree: whole.tree,
    parents: whole.parent,
    author: whole.author,
    committer: whole.committer,
    message: expect.stringMatching(/^subject\n\nlong body line\n/),
  });
  expect(bounded.message.endsWith(TRUNCATED_MESSAGE)).toBe(true);
  expect(bounded.message.length).toBeLessThan(65536 + TRUNCATED_MESSAGE.length);
  expect((await store.readCommit(small)).message).toBe('small\n');
}

describe('bounded reads', () => {
  it('reads the headers of a large loose commit, and the start of its message', async () => {
    await expectSameHeaders();
  });

  it('reads the headers of a large packed commit', async () => {
    await nativeGit(dir, 'repack', '-a', '-d', '--quiet');
    await expectSameHeaders();
  });

  it('refuses a tree larger than its limit from its header', async () => {
    const oid = await hugeTree(dir, 200_000);
    const store = new ObjectStore(join(dir, '.git'), 1024 * 1024);
    await expect(store.readTree(oid)).rejects.toThrow(
      new GitObjectTooLargeError('tree', oid, 7_200_000, 1024 * 1024, 'a tree may take'),
    );
    expect((await store.readTree(oid, 8 * 1024 * 1024)).length).toBe(200_000);
  });
});

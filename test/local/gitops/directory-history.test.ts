/**
 * The commits that made a directory, walked back along first parents on histories made with the
 * native git CLI, from a fresh (shallow) cache that must be deepened to reach them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitRepository } from '../../../src/git/index.ts';
import { type DirectoryHistory, directoryHistory } from '../../../src/gitops/directory-history.ts';
import { TreeCache } from '../../../src/gitops/tree-cache.ts';
import { type GitServer, ScratchWorkTree, startGitServer } from '../../support/git/git-server.ts';

let scratch: string;
let server: GitServer;
let user: ScratchWorkTree;
/** The commits by name. */
const at: Record<string, string> = {};

const file = (text: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  v: "${text}"\n`;

async function commit(name: string, files: Record<string, string | null>): Promise<void> {
  await user.write(files);
  at[name] = await user.commit(name);
}

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'janus-history-'));
  server = await startGitServer();
  user = await ScratchWorkTree.clone(await server.createRepo('history'));
  await commit('start', { 'README.md': 'deploys\n' });
  await commit('create', { 'transactions/d/10-a.patch.yaml': file('1') });
  // 100 commits: more than the first shallow fetch holds, so the walk must deepen the cache.
  for (let i = 0; i < 100; i++) {
    const files: Record<string, string> = { 'docs/log.md': `${i}\n` };
    if (i === 40) files['transactions/d/10-a.patch.yaml'] = file('2');
    if (i === 70) files['transactions/d/ROLLBACK'] = 'undo\n';
    await commit(`c${i}`, files);
  }
  await commit('edit', { 'transactions/d/20-b.patch.yaml': file('3') });
  await commit('tip', { 'docs/log.md': 'tip\n' });
  // A branch merged with a merge commit, as a pull request is.
  await user.checkout('feature', 'new');
  await commit('feature-1', { 'transactions/e/10-a.patch.yaml': file('1') });
  await commit('feature-2', { 'transactions/e/10-a.patch.yaml': file('2') });
  await user.checkout('main');
  at.merge = await user.mergeNoFastForward('feature', 'merge feature');
  await user.push('main');
});

afterAll(async () => {
  await user.dispose();
  await server.stop();
  await rm(scratch, { recursive: true, force: true });
});

async function walk(
  commit: string,
  path: string,
  options: { sinceFile?: string; max?: number; memo?: Map<string, DirectoryHistory> } = {},
): Promise<{ commits: string[]; complete: boolean }> {
  const repo = await GitRepository.open({
    location: server.url('history'),
    cacheDir: await mkdtemp(join(scratch, 'cache-')),
  });
  return repo.run(async (session) => {
    await session.fetch('main');
    const history = await directoryHistory(session, new TreeCache(session.store), commit, path, {
      branch: 'main',
      ...options,
    });
    const names = Object.fromEntries(Object.entries(at).map(([name, oid]) => [oid, name]));
    return { commits: history.commits.map((oid) => names[oid] ?? oid), complete: history.complete };
  });
}

describe('the commits that made a directory', () => {
  it('are each commit that changed it, newest first, back to the one that created it', async () => {
    expect(await walk(at.tip ?? '', 'transactions/d')).toEqual({
      commits: ['edit', 'c70', 'c40', 'create'],
      complete: true,
    });
  });

  it('for a ROLLBACK file, back to the commit that added it', async () => {
    expect(await walk(at.tip ?? '', 'transactions/d', { sinceFile: 'ROLLBACK' })).toEqual({
      commits: ['edit', 'c70'],
      complete: true,
    });
  });

  it('are the merge commit alone for a directory a merge brought in', async () => {
    expect(await walk(at.merge ?? '', 'transactions/e')).toEqual({ commits: ['merge'], complete: true });
  });

  it('are incomplete past the bound', async () => {
    expect((await walk(at.tip ?? '', 'transactions/d', { max: 20 })).complete).toBe(false);
  });

  it('are the same when a walk of an earlier commit is reused', async () => {
    const memo = new Map<string, DirectoryHistory>();
    const repo = await GitRepository.open({
      location: server.url('history'),
      cacheDir: await mkdtemp(join(scratch, 'cache-')),
    });
    const [early, late] = await repo.run(async (session) => {
      await session.fetch('main');
      const trees = new TreeCache(session.store);
      const options = { branch: 'main', memo };
      const first = await directoryHistory(session, trees, at.c50 ?? '', 'transactions/d', options);
      return [first, await directoryHistory(session, trees, at.tip ?? '', 'transactions/d', options)];
    });
    expect(early?.commits).toEqual([at.c40, at.create]);
    expect(late?.commits).toEqual([at.edit, at.c70, at.c40, at.create]);
    expect(memo.size).toBe(2);
  });
});

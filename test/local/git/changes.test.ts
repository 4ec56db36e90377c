/** Change detection on the watched branch, against histories made with the native git CLI. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type ChangeSet, GitRepository, listChanges } from '../../../src/git/index.ts';
import { commitReader, parseTransactionDirectory, repositoryPolicy } from '../../../src/gitops/index.ts';
import { type GitServer, ScratchWorkTree, startGitServer } from '../../support/git/git-server.ts';

/** Every temporary directory of this file lives here, removed at the end. */
let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'janus-test-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

let server: GitServer;
let repoName: string;
let user: ScratchWorkTree;
let counter = 0;

const transaction = (name: string) =>
  `apiVersion: tx.janus.io/v1alpha1\nkind: Transaction\nmetadata:\n  name: ${name}\nspec:\n  serviceAccountName: sa\n`;
const configMap = (name: string, value = '1') =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n  value: "${value}"\n`;
const directory = (name: string, value = '1') => ({
  [`transactions/${name}/transaction.yaml`]: transaction(name),
  [`transactions/${name}/10-cfg.update.yaml`]: configMap(`${name}-cfg`, value),
});

/** Commits on the user's current branch; returns the sha. */
async function commit(files: Record<string, string | null>, message: string): Promise<string> {
  await user.write(files);
  return user.commit(message);
}

async function open(): Promise<GitRepository> {
  return GitRepository.open({
    location: server.url(repoName),
    cacheDir: await mkdtemp(join(scratch, 'cache-')),
  });
}

async function changes(repo: GitRepository, from: string | undefined): Promise<ChangeSet> {
  return repo.run(async (session) => {
    const to = await session.fetch('main');
    if (!to) throw new Error('main does not exist');
    return listChanges(session, from, to, { branch: 'main' });
  });
}

/** "message: name kind, name kind" per commit, for compact assertions. */
const summarize = (set: ChangeSet) =>
  set.commits.map(
    (c) => `${c.commit.message.trim()}: ${c.directories.map((d) => `${d.name} ${d.kind}`).join(', ') || '-'}`,
  );

beforeAll(async () => {
  server = await startGitServer();
});
afterAll(async () => {
  await server.stop();
});
beforeEach(async () => {
  repoName = `changes-${++counter}`;
  const bare = await server.createRepo(repoName);
  user = await ScratchWorkTree.clone(bare);
  await commit({ 'README.md': 'deploys\n' }, 'initial');
  await user.push('main');
});
afterEach(async () => {
  await user.dispose();
});

describe('listChanges', () => {
  it('lists new commits oldest first with the directories each added, modified or removed', async () => {
    const repo = await open();
    const base = (await repo.fetchBranch('main')) as string;
    await commit(directory('alpha'), 'add alpha');
    await commit({ ...directory('beta'), 'transactions/README.md': 'not a transaction\n' }, 'add beta');
    await commit({ 'docs/notes.md': 'unrelated\n' }, 'docs only');
    await commit(
      { 'transactions/alpha/20-more.patch.yaml': configMap('more'), 'transactions/beta': null },
      'edit alpha, drop beta',
    );
    await user.push('main');

    const set = await changes(repo, base);
    expect(set.history).toBe('linear');
    expect(summarize(set)).toEqual([
      'add alpha: alpha added',
      'add beta: beta added',
      'docs only: -',
      'edit alpha, drop beta: alpha modified, beta removed',
    ]);
    expect(set.commits[0]?.directories[0]).toEqual({
      name: 'alpha',
      path: 'transactions/alpha',
      kind: 'added',
    });
  });

  it('ignores a branch until it is merged, then sees the directory at the merge commit', async () => {
    const repo = await open();
    const base = (await repo.fetchBranch('main')) as string;
    await user.checkout('feature/gamma', 'new');
    await commit(directory('gamma'), 'wip gamma');
    await commit(directory('gamma', '2'), 'fix gamma');
    await user.push('feature/gamma');
    await user.checkout('main');

    const before = await changes(repo, base);
    expect(before.history).toBe('unchanged');
    expect(before.commits).toEqual([]);

    const merge = await user.mergeNoFastForward('feature/gamma', 'Merge pull request #7 from feature/gamma');
    await user.push('main');
    const after = await changes(repo, base);
    expect(summarize(after)).toEqual(['Merge pull request #7 from feature/gamma: gamma added']);
    expect(after.commits[0]?.commit.oid).toBe(merge);
  });

  it('lists every directory as added on the first run', async () => {
    await commit({ ...directory('one'), ...directory('two') }, 'two at once');
    await user.push('main');
    const set = await changes(await open(), undefined);
    expect(set.history).toBe('initial');
    expect(summarize(set)).toEqual(['two at once: one added, two added']);
  });

  it('deepens a fresh shallow cache until it reaches the last processed commit', async () => {
    const base = await user.git('rev-parse', 'HEAD');
    for (let i = 0; i < 5; i++) await commit(directory(`d${i}`), `add d${i}`);
    await user.push('main');
    const set = await changes(await open(), base);
    expect(set.history).toBe('linear');
    expect(summarize(set)).toEqual([0, 1, 2, 3, 4].map((i) => `add d${i}: d${i} added`));
  });

  it('reports a force-push as rewritten and compares with what was processed', async () => {
    await commit(directory('kept'), 'add kept');
    await commit(directory('dropped'), 'add dropped');
    await user.push('main');
    const repo = await open();
    const processed = (await repo.fetchBranch('main')) as string;

    await user.git('reset', '--hard', 'HEAD~1');
    await commit(directory('fresh'), 'add fresh');
    await user.push('main', { force: true });

    const set = await changes(repo, processed);
    expect(set.history).toBe('rewritten');
    expect(summarize(set)).toEqual(['add fresh: dropped removed, fresh added']);
  });

  it('reports a merge of the processed tip into another line of history as merged', async () => {
    await commit(directory('remote-side'), 'remote side');
    await user.push('main');
    const repo = await open();
    const processed = (await repo.fetchBranch('main')) as string;
    // Someone commits on an old local copy, merges the remote main into it and pushes: the
    // processed commit is an ancestor of the new tip, but not on its first-parent chain.
    await user.git('checkout', '--quiet', '-b', 'local', 'HEAD~1');
    await commit(directory('local-side'), 'local side');
    await user.git('merge', '--quiet', '--no-ff', '-m', 'merge main into local', 'main');
    await user.push('main');

    const set = await changes(repo, processed);
    expect(set.history).toBe('merged');
    expect(summarize(set)).toEqual(['merge main into local: local-side added']);
  });

  it('reads a directory as it was at a given commit, through the same parser as janus validate', async () => {
    const first = await commit(directory('alpha', 'first'), 'add alpha');
    await commit(directory('alpha', 'second'), 'edit alpha');
    await user.push('main');
    const repo = await open();
    await repo.fetchBranch('main');
    const base = await user.git('rev-parse', 'HEAD~2');
    await changes(repo, base); // brings the history in

    const atFirst = await repo.run((session) =>
      parseTransactionDirectory(commitReader(session.store, first), 'transactions/alpha', {
        policy: repositoryPolicy({ defaultNamespace: 'default', allowedServiceAccounts: 'sa' }),
      }),
    );
    if (!atFirst.ok) throw new Error(JSON.stringify(atFirst.diagnostics));
    expect(atFirst.transaction.spec.changes[0]?.content).toMatchObject({ data: { value: 'first' } });
  });
});

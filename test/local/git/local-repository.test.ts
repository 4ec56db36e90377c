/** A repository on local disk, used in place: no fetch, results committed into it directly. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GitRepository, listChanges, writeFiles } from '../../../src/git/index.ts';
import { commitReader, parseTransactionDirectory, repositoryPolicy } from '../../../src/gitops/index.ts';
import { ResultsWriter } from '../../../src/results/index.ts';
import { git } from '../../support/git/git-server.ts';

/** Every temporary directory of this file lives here, removed at the end. */
let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'janus-test-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const transaction = (name: string) =>
  `apiVersion: tx.janus.io/v1alpha1\nkind: Transaction\nmetadata:\n  name: ${name}\nspec:\n  serviceAccountName: sa\n`;
const configMap = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n';

let work: string;
let writer: ResultsWriter | undefined;

async function commitFiles(dir: string, files: Record<string, string>, message: string): Promise<string> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  await git(dir, 'add', '--all');
  await git(dir, 'commit', '--quiet', '-m', message);
  return git(dir, 'rev-parse', 'HEAD');
}

const cacheDir = () => mkdtemp(join(scratch, 'cache-'));

beforeEach(async () => {
  work = await mkdtemp(join(scratch, 'local-'));
  await git(work, 'init', '--quiet', '--initial-branch=main');
  await commitFiles(work, { 'README.md': 'local deploys\n' }, 'initial');
});
afterEach(async () => {
  await writer?.close();
  writer = undefined;
});

describe('a local repository path', () => {
  it('reads the branch, its changes and a directory straight from the repository', async () => {
    const repo = await GitRepository.open({ location: work, cacheDir: await cacheDir() });
    const base = await repo.fetchBranch('main');
    const added = await commitFiles(
      work,
      {
        'transactions/demo/transaction.yaml': transaction('demo'),
        'transactions/demo/10-cfg.patch.yaml': configMap,
      },
      'add demo',
    );
    expect(await repo.fetchBranch('main')).toBe(added);
    const result = await repo.run(async (session) => {
      const set = await listChanges(session, base, added, { branch: 'main' });
      const parsed = await parseTransactionDirectory(
        commitReader(session.store, added),
        'transactions/demo',
        {
          policy: repositoryPolicy({ defaultNamespace: 'default', allowedServiceAccounts: 'sa' }),
        },
      );
      return { set, parsed };
    });
    expect(result.set.history).toBe('linear');
    expect(result.set.commits.map((c) => c.directories)).toEqual([
      [{ name: 'demo', path: 'transactions/demo', kind: 'added' }],
    ]);
    expect(result.parsed.ok).toBe(true);
  });

  it('commits results into the repository’s own results branch, leaving the work tree alone', async () => {
    const repo = await GitRepository.open({ location: work, cacheDir: await cacheDir() });
    writer = await ResultsWriter.open({ repository: repo, batchDelayMs: 60_000 });
    await writer.write({
      files: { 'results/default/demo.yaml': 'phase: Committed\n' },
      message: 'default/demo: Committed (1/1 changes)\n',
    });
    await writer.write({
      files: { 'results/default/demo.yaml': 'phase: RolledBack\n' },
      message: 'default/demo: RolledBack (1/1 changes rolled back)\n',
    });
    await writer.flush();
    expect(await git(work, 'log', '--format=%s', 'janus/results')).toBe(
      'default/demo: RolledBack (1/1 changes rolled back)\ndefault/demo: Committed (1/1 changes)',
    );
    expect(await git(work, 'show', 'janus/results:results/default/demo.yaml')).toBe('phase: RolledBack');
    expect(await git(work, 'status', '--porcelain')).toBe('');
    expect(await git(work, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
    expect(await git(work, 'fsck', '--no-progress')).toBe('');
  });

  it('refuses to move a branch that moved since it was read (no forced update)', async () => {
    const repo = await GitRepository.open({ location: work, cacheDir: await cacheDir() });
    const error = await repo
      .run(async (session) => {
        const base = await session.fetch('main');
        const tree = await writeFiles(session.store, undefined, { 'x.txt': 'x' });
        const signature = {
          name: 'Janus',
          email: 'janus@example.invalid',
          timestamp: 1_700_000_000,
          timezoneOffset: 0,
        };
        const oid = await session.store.writeCommit({
          tree,
          parents: [],
          message: 'x\n',
          author: signature,
          committer: signature,
        });
        await commitFiles(work, { 'y.txt': 'someone else' }, 'someone else');
        await session.push('main', oid, base, []); // a local repository has the objects already
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'rejected', ref: 'main' });
    expect(await git(work, 'log', '-1', '--format=%s', 'main')).toBe('someone else');
  });

  it('accepts file:// URLs and bare repositories', async () => {
    const bare = await mkdtemp(join(scratch, 'bare-'));
    await git(bare, 'clone', '--quiet', '--bare', work, '.');
    const repo = await GitRepository.open({ location: `file://${bare}`, cacheDir: await cacheDir() });
    expect(await repo.fetchBranch('main')).toBe(await git(work, 'rev-parse', 'HEAD'));
  });

  it('says clearly when the path is not a repository', async () => {
    const empty = await mkdtemp(join(scratch, 'empty-'));
    await expect(GitRepository.open({ location: empty, cacheDir: await cacheDir() })).rejects.toThrow(
      `${empty} is not a Git repository`,
    );
  });
});

/**
 * Pushes over real smart HTTP (git http-backend), as the results writer makes them: a pack of the
 * objects it built in memory (smart-http-push.ts). The branch is created from nothing, a moved
 * tip is refused (before the request or by the server itself) and never overwritten, and the
 * server's repository stays whole (`git fsck`).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Signature } from '../../../src/git/commit-info.ts';
import { GitRepository } from '../../../src/git/index.ts';
import { commitRecords } from '../../../src/results/commit-records.ts';
import { type ResultRecord, ResultsWriter } from '../../../src/results/index.ts';
import { type GitServer, git, pushCommit, startGitServer } from '../../support/git/git-server.ts';

let scratch: string;
let server: GitServer;
let repoName: string;
let bare: string;
let counter = 0;
const writers: ResultsWriter[] = [];
const BRANCH = 'janus/results';
const WHO: Signature = {
  name: 'Janus',
  email: 'janus@tx.janus.io',
  timestamp: 1_772_366_400,
  timezoneOffset: 0,
};

const result = (name: string, phase = 'Committed'): ResultRecord => ({
  files: { [`results/default/${name}.yaml`]: `phase: ${phase}\n`, 'results/index.yaml': `last: ${name}\n` },
  message: `default/${name}: ${phase}\n`,
});

beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'janus-test-'));
  server = await startGitServer();
});
afterAll(async () => {
  await server.stop();
  await rm(scratch, { recursive: true, force: true });
});
beforeEach(async () => {
  repoName = `push-${++counter}`;
  bare = await server.createRepo(repoName);
  await pushCommit(bare, 'main', { 'transactions/README.md': 'deploys\n' });
});
afterEach(async () => {
  server.setDown(false);
  server.beforeRequest(() => true);
  await Promise.all(writers.splice(0).map((w) => w.close()));
});

async function open(): Promise<GitRepository> {
  return GitRepository.open({
    location: server.url(repoName),
    cacheDir: await mkdtemp(join(scratch, 'cache-')),
  });
}

/** Commits `records` on the branch's tip as the results writer does, and pushes them onto `expected`. */
async function commitAndPush(
  repository: GitRepository,
  records: readonly ResultRecord[],
  expected?: (fetched: string | undefined) => string | undefined,
): Promise<string> {
  return repository.run(async (session) => {
    const base = await session.fetch(BRANCH);
    const { tip, objects } = await commitRecords(session.store, base, records, WHO);
    await session.push(BRANCH, tip as string, expected ? expected(base) : base, objects);
    return tip as string;
  });
}

/** `git fsck --strict` of the server's repository: nothing missing, nothing malformed. */
async function fsck(): Promise<string> {
  return git(bare, 'fsck', '--strict', '--no-dangling', '--no-progress');
}

const receivePacks = () =>
  server
    .requests(repoName)
    .filter((r) => r.path === 'git-receive-pack' || r.query === 'service=git-receive-pack');

describe('push', () => {
  it('creates the branch from nothing, in one discovery and one receive-pack', async () => {
    const repository = await open();
    server.clearRequests();
    const tip = await commitAndPush(repository, [result('alpha'), result('beta')]);
    expect(await git(bare, 'rev-parse', BRANCH)).toBe(tip);
    expect(await git(bare, 'log', '--format=%s', BRANCH)).toBe(
      'default/beta: Committed\ndefault/alpha: Committed',
    );
    expect(await git(bare, 'show', `${BRANCH}:results/default/alpha.yaml`)).toBe('phase: Committed');
    expect(receivePacks().map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'GET info/refs 200',
      'POST git-receive-pack 200',
    ]);
    expect(await fsck()).toBe('');
  });

  it('then builds on its tip', async () => {
    const repository = await open();
    await commitAndPush(repository, [result('alpha')]);
    const tip = await commitAndPush(repository, [result('beta'), result('gamma')]);
    expect(await git(bare, 'rev-parse', BRANCH)).toBe(tip);
    expect(await git(bare, 'rev-list', '--count', BRANCH)).toBe('3');
    expect(await fsck()).toBe('');
  });

  it('refuses to create the branch when it exists already, leaving it as it was', async () => {
    const theirs = await pushCommit(bare, BRANCH, { 'results/other.yaml': 'x\n' }, 'someone else');
    const error = await commitAndPush(await open(), [result('alpha')], () => undefined).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ kind: 'rejected', ref: BRANCH });
    expect(await git(bare, 'rev-parse', BRANCH)).toBe(theirs);
  });

  it('refuses a tip that moved after its fetch, leaving the other commit in place', async () => {
    const repository = await open();
    await commitAndPush(repository, [result('alpha')]);
    let theirs = '';
    const error = await commitAndPush(repository, [result('beta')], (base) => {
      // Another writer pushes between this fetch and this push's discovery.
      server.beforeRequest(async (request) => {
        if (request.repo !== repoName || request.query !== 'service=git-receive-pack') return false;
        theirs = await pushCommit(bare, BRANCH, { 'results/other.yaml': 'x\n' }, 'someone else');
        return true;
      });
      return base;
    }).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'rejected', ref: BRANCH });
    expect(String(error)).toContain('the branch moved');
    expect(await git(bare, 'rev-parse', BRANCH)).toBe(theirs);
    expect(await fsck()).toBe('');
  });

  it('is refused by the server itself when the tip moves between discovery and the pack', async () => {
    const repository = await open();
    await commitAndPush(repository, [result('alpha')]);
    let theirs = '';
    server.beforeRequest(async (request) => {
      if (request.repo !== repoName || request.method !== 'POST' || request.path !== 'git-receive-pack')
        return false;
      theirs = await pushCommit(bare, BRANCH, { 'results/other.yaml': 'x\n' }, 'someone else');
      return true;
    });
    const error = await commitAndPush(repository, [result('beta')]).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'rejected', ref: BRANCH });
    expect(String(error)).toContain('the server refused the update');
    expect(await git(bare, 'rev-parse', BRANCH)).toBe(theirs);
    expect(await fsck()).toBe('');
  });

  it('a replay sends objects the cache already has but the remote lacks (the same results, the same clock)', async () => {
    const repository = await open();
    const writer = await ResultsWriter.open({
      repository,
      batchDelayMs: 60_000,
      retry: { baseMs: 60_000, capMs: 60_000, jitter: 0 }, // this test flushes by hand
      clock: () => new Date('2026-03-01T12:00:00Z'),
    });
    writers.push(writer);
    await writer.write(result('alpha'));
    await writer.flush();
    // The next push's pack is lost: its objects are in the cache's loose files, not on the server.
    server.beforeRequest((request) => {
      if (request.repo !== repoName || request.path !== 'git-receive-pack') return false;
      server.setDown(true);
      return true;
    });
    await writer.write(result('beta'));
    await writer.write(result('gamma'));
    await expect(writer.flush()).rejects.toMatchObject({ kind: 'unreachable' });
    server.setDown(false);
    await writer.flush();
    expect(writer.pending).toBe(0);
    expect(await git(bare, 'log', '--format=%s', BRANCH)).toBe(
      'default/gamma: Committed\ndefault/beta: Committed\ndefault/alpha: Committed',
    );
    expect(await fsck()).toBe('');
  });

  it('leaves the server whole after many pushes, small packs and large ones', async () => {
    const repository = await open();
    const writer = await ResultsWriter.open({ repository, batchDelayMs: 60_000 });
    writers.push(writer);
    for (let i = 0; i < 150; i++) await writer.write(result(`many-${i}`, i % 2 ? 'Committed' : 'RolledBack'));
    await writer.flush(); // 100 results (past git's unpackLimit: kept as a pack), then 50
    await writer.write(result('last'));
    await writer.flush(); // a handful of objects: unpacked into loose ones
    expect(await git(bare, 'rev-list', '--count', BRANCH)).toBe('151');
    expect(await git(bare, 'show', `${BRANCH}:results/index.yaml`)).toBe('last: last');
    expect(await fsck()).toBe('');
  });
});

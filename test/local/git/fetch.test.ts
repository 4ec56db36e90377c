/** Incremental fetching over real smart HTTP (git http-backend), measured at the server. */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, GitAccessError, GitCredentials, GitRepository } from '../../../src/git/index.ts';
import { openUploadPack } from '../../../src/git/upload-pack.ts';
import { type GitServer, pushCommit, startGitServer } from '../../support/git/git-server.ts';

/** Every temporary directory of this file lives here, removed at the end. */
let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'janus-test-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

let server: GitServer;

beforeAll(async () => {
  server = await startGitServer();
});
afterAll(async () => {
  await server.stop();
});

const cacheDir = () => mkdtemp(join(scratch, 'cache-'));

/**
 * The fetches that brought a pack: a poll asks for the capabilities (GET), then lists the
 * branch (POST ls-refs), then, only when the branch moved, fetches (a second POST).
 */
const packRequests = (repo: string) =>
  server.requests(repo).filter((r, i, all) => {
    const previous = all[i - 1];
    return r.method === 'POST' && previous?.method === 'POST' && all[i - 2]?.method === 'GET';
  });

describe('fetching the watched branch', () => {
  it('a poll with no new commit asks for the tip and downloads no pack', async () => {
    const bare = await server.createRepo('no-change');
    const tip = await pushCommit(bare, 'main', { 'transactions/a/transaction.yaml': 'x: 1\n' });
    const repo = await GitRepository.open({ location: server.url('no-change'), cacheDir: await cacheDir() });
    expect(await repo.fetchBranch('main')).toBe(tip);
    // Protocol version 2 throughout: capabilities, ls-refs, fetch.
    expect(server.requests('no-change').map((r) => `${r.method} ${r.path} ${r.gitProtocol}`)).toEqual([
      'GET info/refs version=2',
      'POST git-upload-pack version=2',
      'POST git-upload-pack version=2',
    ]);
    expect(packRequests('no-change')).toHaveLength(1);

    server.clearRequests();
    expect(await repo.fetchBranch('main')).toBe(tip);
    const requests = server.requests('no-change');
    expect(requests.map((r) => `${r.method} ${r.path} ${r.gitProtocol}`)).toEqual([
      'GET info/refs version=2',
      'POST git-upload-pack version=2',
    ]);
    expect(packRequests('no-change')).toHaveLength(0);
    expect(requests.reduce((sum, r) => sum + r.bytesSent, 0)).toBeLessThan(1024);
  });

  it('downloads only the new commits, not the repository again', async () => {
    const bare = await server.createRepo('incremental');
    await pushCommit(bare, 'main', { 'assets/big.bin': randomBytes(256 * 1024).toString('base64') });
    const repo = await GitRepository.open({
      location: server.url('incremental'),
      cacheDir: await cacheDir(),
    });
    await repo.fetchBranch('main');
    const firstPack = packRequests('incremental')[0]?.bytesSent ?? 0;
    expect(firstPack).toBeGreaterThan(256 * 1024);

    server.clearRequests();
    const next = await pushCommit(bare, 'main', { 'transactions/b/transaction.yaml': 'x: 2\n' });
    expect(await repo.fetchBranch('main')).toBe(next);
    const [pack] = packRequests('incremental');
    expect(pack?.bytesSent).toBeLessThan(4096);
  });

  it('fetches from a server that speaks only protocol version 0 too, and deepens there', async () => {
    const old = await startGitServer({ protocolV0Only: true });
    try {
      const bare = await old.createRepo('v0');
      const first = await pushCommit(bare, 'main', { 'transactions/a/transaction.yaml': 'x: 1\n' });
      const second = await pushCommit(bare, 'main', { 'transactions/b/transaction.yaml': 'x: 2\n' });
      const repo = await GitRepository.open({ location: old.url('v0'), cacheDir: await cacheDir() });
      expect(await repo.fetchBranch('main')).toBe(second);
      expect(old.requests('v0').every((r) => r.gitProtocol === '')).toBe(true);
      const third = await pushCommit(bare, 'main', { 'transactions/c/transaction.yaml': 'x: 3\n' });
      expect(await repo.fetchBranch('main')).toBe(third);
      // The first fetch was shallow: the first commit comes with deepening.
      expect(await repo.run((s) => s.store.findCommit(first))).toBeUndefined();
      expect(await repo.run((s) => s.deepen('main', 5))).toBe(true);
      expect((await repo.run((s) => s.store.readCommit(first))).oid).toBe(first);
    } finally {
      await old.stop();
    }
  });

  it('fetches shallow first, then deepens, in protocol version 2', async () => {
    const bare = await server.createRepo('deepen-v2');
    const commits: string[] = [];
    for (let i = 0; i < 4; i++)
      commits.push(await pushCommit(bare, 'main', { [`transactions/t${i}/transaction.yaml`]: `n: ${i}\n` }));
    const repo = await GitRepository.open({ location: server.url('deepen-v2'), cacheDir: await cacheDir() });
    expect(await repo.fetchBranch('main')).toBe(commits[3]);
    expect(await repo.run((s) => s.store.shallowCommits())).toEqual(new Set([commits[3]]));
    expect(await repo.run((s) => s.store.findCommit(commits[2] ?? ''))).toBeUndefined();
    expect(await repo.run((s) => s.deepen('main', 2))).toBe(true);
    expect(await repo.run((s) => s.store.shallowCommits())).toEqual(new Set([commits[1]]));
    expect((await repo.run((s) => s.store.readCommit(commits[2] ?? ''))).parents).toEqual([commits[1]]);
    expect(await repo.run((s) => s.deepen('main', 10))).toBe(true);
    expect(await repo.run((s) => s.store.shallowCommits())).toEqual(new Set());
    expect(await repo.run((s) => s.deepen('main', 10))).toBe(false);
  });

  it('removes the temporary pack a killed fetch left, once it is an hour old', async () => {
    const bare = await server.createRepo('abandoned');
    await pushCommit(bare, 'main', { 'transactions/a/transaction.yaml': 'x: 1\n' });
    const cache = await cacheDir();
    const repo = await GitRepository.open({ location: server.url('abandoned'), cacheDir: cache });
    await repo.fetchBranch('main');
    const packDir = join(
      cache,
      ...((await readdir(cache, { recursive: true }))
        .find((p) => p.endsWith(join('objects', 'pack')))
        ?.split('/') ?? []),
    );
    const old = join(packDir, 'tmp-fetch-killed.pack');
    const fresh = join(packDir, 'tmp-fetch-running.pack');
    await writeFile(old, 'PACK');
    await writeFile(fresh, 'PACK');
    const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    await utimes(old, twoHoursAgo, twoHoursAgo);
    const next = await pushCommit(bare, 'main', { 'transactions/b/transaction.yaml': 'x: 2\n' });
    expect(await repo.fetchBranch('main')).toBe(next);
    const left = await readdir(packDir);
    expect(left).not.toContain('tmp-fetch-killed.pack');
    expect(left).toContain('tmp-fetch-running.pack');
  });

  it('fails a fetch whose pack cannot be written, naming why, and nothing else', async () => {
    const bare = await server.createRepo('unwritable');
    const tip = await pushCommit(bare, 'main', { 'transactions/a/transaction.yaml': 'x: 1\n' });
    const endpoint = { http: createHttpClient(), url: server.url('unwritable'), headers: () => ({}) };
    const notAFile = await mkdtemp(join(scratch, 'not-a-file-'));
    const uploadPack = await openUploadPack(endpoint, 'refs/heads/main');
    await expect(uploadPack.fetch({ want: tip, haves: [], shallow: new Set() }, notAFile)).rejects.toThrow(
      /EISDIR/,
    );
  });

  it('says a branch does not exist, and that a repository does not exist', async () => {
    const bare = await server.createRepo('missing-branch');
    await pushCommit(bare, 'main', { 'README.md': 'hello\n' });
    const repo = await GitRepository.open({
      location: server.url('missing-branch'),
      cacheDir: await cacheDir(),
    });
    expect(await repo.fetchBranch('janus/results')).toBeUndefined();

    const nowhere = await GitRepository.open({
      location: server.url('no-such-repo'),
      cacheDir: await cacheDir(),
    });
    const error = await nowhere.fetchBranch('main').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitAccessError);
    expect(error).toMatchObject({ kind: 'not-found', repository: server.url('no-such-repo'), ref: 'main' });
  });

  it('reports an outage as unreachable, whether the server answers 503 or resets connections', async () => {
    const bare = await server.createRepo('outage');
    await pushCommit(bare, 'main', { 'README.md': 'hello\n' });
    const repo = await GitRepository.open({ location: server.url('outage'), cacheDir: await cacheDir() });
    try {
      server.setDown(true, 'unavailable');
      await expect(repo.fetchBranch('main')).rejects.toMatchObject({ kind: 'unreachable', retryable: true });
      server.setDown(true, 'reset');
      await expect(repo.fetchBranch('main')).rejects.toMatchObject({ kind: 'unreachable', retryable: true });
    } finally {
      server.setDown(false);
    }
    expect(await repo.fetchBranch('main')).toMatch(/^[0-9a-f]{40}$/);
  });

  it('gives up on a server that stops responding instead of hanging', async () => {
    const silent = createServer(() => {}); // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/stuck.git`;
      const repo = await GitRepository.open({
        location: url,
        cacheDir: await cacheDir(),
        http: createHttpClient({ idleTimeoutMs: 300 }),
      });
      await expect(repo.fetchBranch('main')).rejects.toMatchObject({ kind: 'timeout', repository: url });
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });

  it('follows a moved repository, and never carries the credentials to another origin', async () => {
    const bare = await server.createRepo('moved');
    const tip = await pushCommit(bare, 'main', { 'README.md': 'hello\n' });
    const seen: { at: string; authorization: string | undefined }[] = [];
    // Another origin (another port): records what reached it, then sends the request on to Git.
    const elsewhere = createServer((req, res) => {
      seen.push({ at: 'elsewhere', authorization: req.headers.authorization });
      res
        .writeHead(307, { location: `${server.url('moved')}${(req.url ?? '').replace(/^\/moved\.git/, '')}` })
        .end();
    });
    // The configured address: every request is sent on, 307, to the other origin.
    const configured = createServer((req, res) => {
      seen.push({ at: 'configured', authorization: req.headers.authorization });
      const port = (elsewhere.address() as AddressInfo).port;
      res.writeHead(307, { location: `http://127.0.0.1:${port}${req.url}` }).end();
    });
    for (const s of [elsewhere, configured])
      await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    try {
      const repo = await GitRepository.open({
        location: `http://127.0.0.1:${(configured.address() as AddressInfo).port}/moved.git`,
        cacheDir: await cacheDir(),
        credentials: async () => new GitCredentials('basic', 'deployer', 'not-for-elsewhere', 'a test'),
      });
      expect(await repo.fetchBranch('main')).toBe(tip);
      expect(
        seen.filter((r) => r.at === 'configured').every((r) => r.authorization?.startsWith('Basic ')),
      ).toBe(true);
      expect(seen.filter((r) => r.at === 'elsewhere').length).toBeGreaterThan(0);
      expect(seen.filter((r) => r.at === 'elsewhere' && r.authorization !== undefined)).toEqual([]);
    } finally {
      for (const s of [elsewhere, configured]) {
        s.closeAllConnections();
        s.close();
      }
    }
  });

  it('rebuilds its cache when fetches have piled up packfiles, and keeps working', async () => {
    const bare = await server.createRepo('compaction');
    const dir = await cacheDir();
    const repo = await GitRepository.open({ location: server.url('compaction'), cacheDir: dir, maxPacks: 2 });
    const packCounts: number[] = [];
    for (let i = 0; i < 5; i++) {
      const tip = await pushCommit(bare, 'main', { [`transactions/t${i}/transaction.yaml`]: `n: ${i}\n` });
      expect(await repo.fetchBranch('main')).toBe(tip);
      const packDir = join(repo.stateDir, 'cache.git', 'objects', 'pack');
      packCounts.push((await readdir(packDir)).filter((f) => f.endsWith('.pack')).length);
    }
    expect(Math.max(...packCounts)).toBeLessThanOrEqual(3);
    expect(packCounts).toContain(1); // it was rebuilt at least once
  });
});

/**
 * What one fetch may download (--max-fetch-bytes), over real smart HTTP (git http-backend): a
 * larger fetch is stopped early with an error naming the repository and the limit, and the cache
 * is still usable by the next fetch.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_FETCH_BYTES, GitAccessError, GitRepository } from '../../../src/git/index.ts';
import { type GitServer, pushCommit, startGitServer } from '../../support/git/git-server.ts';

let scratch: string;
let server: GitServer;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'janus-fetch-limit-'));
  server = await startGitServer();
});
afterAll(async () => {
  await server.stop();
  await rm(scratch, { recursive: true, force: true });
});

const MiB = 1024 * 1024;

describe('the fetch cap', () => {
  it('stops a fetch past the limit, names the repository and the limit, and leaves the cache usable', async () => {
    const bare = await server.createRepo('too-big');
    // Random bytes do not compress: the pack is about as large as the file.
    await pushCommit(bare, 'main', { 'assets/big.bin': randomBytes(12 * MiB).toString('base64') });
    const url = server.url('too-big');
    const cacheDir = await mkdtemp(join(scratch, 'cache-'));

    server.clearRequests();
    const capped = await GitRepository.open({ location: url, cacheDir, maxFetchBytes: 256 * 1024 });
    const error = await capped.fetchBranch('main').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitAccessError);
    expect(error).toMatchObject({ kind: 'too-large', repository: url, ref: 'main' });
    expect((error as Error).message).toBe(
      `fetch ${url} (main): the server sent more than 256 KiB (262144 bytes) for one fetch, the limit set by --max-fetch-bytes (JANUS_MAX_FETCH_BYTES); the download was stopped`,
    );
    // The connection was closed early: the server did not get to send the whole pack.
    const sent = server
      .requests('too-big')
      .filter((r) => r.path === 'git-upload-pack')
      .reduce((sum, r) => sum + r.bytesSent, 0);
    expect(sent).toBeLessThan(12 * MiB);

    // Nothing of the stopped fetch stays behind (no tracking ref, no shallow list naming commits
    // that never came): once the tip no longer holds the large file, the same limit lets it through.
    const tip = await pushCommit(bare, 'main', { 'assets/big.bin': null, 'README.md': 'smaller\n' });
    expect(await capped.fetchBranch('main')).toBe(tip);
    const roomy = await GitRepository.open({
      location: url,
      cacheDir,
      maxFetchBytes: DEFAULT_MAX_FETCH_BYTES,
    });
    expect(await roomy.fetchBranch('main')).toBe(tip);
  });

  it('leaves small fetches alone under the default limit, and 0 turns the limit off', async () => {
    const bare = await server.createRepo('small');
    const tip = await pushCommit(bare, 'main', { 'transactions/a/transaction.yaml': 'x: 1\n' });
    for (const maxFetchBytes of [undefined, 0]) {
      const repo = await GitRepository.open({
        location: server.url('small'),
        cacheDir: await mkdtemp(join(scratch, 'cache-')),
        ...(maxFetchBytes !== undefined && { maxFetchBytes }),
      });
      expect(await repo.fetchBranch('main')).toBe(tip);
    }
  });
});

/** HTTP basic auth against a server that demands it; secrets never leak into errors or logs. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { credentialsProvider, GitAccessError, GitRepository } from '../../../src/git/index.ts';
import { ObjectBatch } from '../../../src/git/object-batch.ts';
import { type GitServer, pushCommit, startGitServer } from '../../support/git/git-server.ts';

/** Every temporary directory of this file lives here, removed at the end. */
let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'janus-test-'));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

const USERNAME = 'janus-bot';
const PASSWORD = 's3cr3t-token-value';
let server: GitServer;
let secrets: string;
let tip: string;

beforeAll(async () => {
  server = await startGitServer({ auth: { username: USERNAME, password: PASSWORD } });
  const bare = await server.createRepo('private');
  tip = await pushCommit(bare, 'main', { 'transactions/a/transaction.yaml': 'x: 1\n' });
  secrets = await mkdtemp(join(scratch, 'secrets-'));
});
afterAll(async () => {
  await server.stop();
});

async function open(credentials?: ReturnType<typeof credentialsProvider>): Promise<GitRepository> {
  return GitRepository.open({
    location: server.url('private'),
    cacheDir: await mkdtemp(join(scratch, 'cache-')),
    ...(credentials && { credentials }),
  });
}

describe('basic auth', () => {
  it('fetches with a password read from a file (trailing newline ignored), without a 401 round trip', async () => {
    const file = join(secrets, 'password');
    await writeFile(file, `${PASSWORD}\n`);
    server.clearRequests();
    const repo = await open(credentialsProvider({ username: USERNAME, secret: { file } }));
    expect(await repo.fetchBranch('main')).toBe(tip);
    expect(server.requests('private').map((r) => r.status)).not.toContain(401);
  });

  it('reads the secret from an environment variable', async () => {
    const env = { JANUS_GIT_TOKEN: PASSWORD };
    const repo = await open(
      credentialsProvider({ username: USERNAME, secret: { env: 'JANUS_GIT_TOKEN' } }, env),
    );
    expect(await repo.fetchBranch('main')).toBe(tip);
  });

  it('re-reads the file on each operation, so a rotated secret works without a restart', async () => {
    const file = join(secrets, 'rotating');
    await writeFile(file, 'old-and-wrong');
    const repo = await open(credentialsProvider({ username: USERNAME, secret: { file } }));
    await expect(repo.fetchBranch('main')).rejects.toMatchObject({ kind: 'auth' });
    await writeFile(file, PASSWORD);
    expect(await repo.fetchBranch('main')).toBe(tip);
  });

  it('fails clearly on a wrong password, naming the repository but never the secret', async () => {
    const wrong = 'wrong-password-123';
    const repo = await open(credentialsProvider({ username: USERNAME, secret: { env: 'T' } }, { T: wrong }));
    const error = await repo.fetchBranch('main').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GitAccessError);
    expect(error).toMatchObject({
      kind: 'auth',
      retryable: false,
      repository: server.url('private'),
      ref: 'main',
    });
    const message = (error as Error).message;
    expect(message).toBe(
      `fetch ${server.url('private')} (main): the server refused the credentials (HTTP 401); check the configured token or password`,
    );
    expect(inspect(error, { depth: 5 })).not.toContain(wrong);
  });

  it('fails clearly without credentials', async () => {
    const repo = await open();
    await expect(repo.fetchBranch('main')).rejects.toMatchObject({ kind: 'auth' });
  });

  it('fails clearly when the secret file is missing or empty', async () => {
    const missing = join(secrets, 'does-not-exist');
    const repo = await open(credentialsProvider({ secret: { file: missing } }));
    await expect(repo.fetchBranch('main')).rejects.toThrow(
      `fetch ${server.url('private')} (main): cannot read the Git credentials from file ${missing} (ENOENT)`,
    );
    const empty = await open(credentialsProvider({ secret: { env: 'EMPTY' } }, { EMPTY: '' }));
    await expect(empty.fetchBranch('main')).rejects.toThrow(
      'the Git credentials in environment variable EMPTY are empty',
    );
  });

  it('never shows the secret when credentials are printed, logged or serialized', async () => {
    const credentials = await credentialsProvider(
      { username: USERNAME, secret: { env: 'T' } },
      { T: PASSWORD },
    )();
    for (const text of [
      String(credentials),
      inspect(credentials),
      JSON.stringify(credentials),
      `${credentials}`,
    ]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).toContain('[redacted]');
    }
    expect(credentials.headers().Authorization).toBe(
      `Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`).toString('base64')}`,
    );
  });

  it('pushes with credentials', async () => {
    const repo = await open(
      credentialsProvider({ username: USERNAME, secret: { env: 'T' } }, { T: PASSWORD }),
    );
    const pushed = await repo.run(async (session) => {
      const base = await session.fetch('main');
      const { tree } = await session.store.readCommit(base as string);
      const signature = {
        name: 'Janus',
        email: 'janus@example.invalid',
        timestamp: 1_700_000_000,
        timezoneOffset: 0,
      };
      const batch = new ObjectBatch(session.store);
      const oid = await batch.writeCommit({
        tree,
        parents: [base as string],
        message: 'empty\n',
        author: signature,
        committer: signature,
      });
      await batch.flush();
      await session.push('main', oid, base, batch.objects());
      return oid;
    });
    expect(
      await (
        await open(credentialsProvider({ username: USERNAME, secret: { env: 'T' } }, { T: PASSWORD }))
      ).fetchBranch('main'),
    ).toBe(pushed);
    tip = pushed;
  });
});

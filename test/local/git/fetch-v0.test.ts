/**
 * Fetching from a server that speaks only protocol version 0 (git http-backend given no
 * GIT_PROTOCOL, as behind many hosted and self-hosted servers), and from one that speaks
 * version 2, through one code path: the pack streamed to a file and indexed by
 * src/git/pack-indexer.ts, with the same bounds and the same connectivity check. Before, such a
 * server was fetched from through isomorphic-git, which held the pack and every object whole.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GitHttpRequest, HttpClient } from 'isomorphic-git';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, GitRepository } from '../../../src/git/index.ts';
import { FLUSH, pktLine } from '../../../src/git/receive-pack-protocol.ts';
import { appendDelta, craftDelta, craftPack } from '../../support/git/crafted-pack.ts';
import { type GitServer, pushCommit, startGitServer } from '../../support/git/git-server.ts';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

let scratch: string;
let v0: GitServer;
let v2: GitServer;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'janus-fetch-v0-'));
  v0 = await startGitServer({ protocolV0Only: true });
  v2 = await startGitServer();
});
afterAll(async () => {
  await v0.stop();
  await v2.stop();
  await rm(scratch, { recursive: true, force: true });
});

const cacheDir = () => mkdtemp(join(scratch, 'cache-'));
const described = (server: GitServer, repo: string) =>
  server.requests(repo).map((r) => `${r.method} ${r.path} ${r.gitProtocol}`.trim());

describe('a server that speaks only protocol version 0', () => {
  it('answers a request for version 2 in version 0: the tip comes shallow, in one GET and one POST', async () => {
    const bare = await v0.createRepo('clone');
    await pushCommit(bare, 'main', { 'transactions/a/transaction.yaml': 'x: 1\n' });
    const tip = await pushCommit(bare, 'main', { 'transactions/b/transaction.yaml': 'x: 2\n' });
    const repo = await GitRepository.open({ location: v0.url('clone'), cacheDir: await cacheDir() });
    expect(await repo.fetchBranch('main')).toBe(tip);
    expect(described(v0, 'clone')).toEqual(['GET info/refs', 'POST git-upload-pack']);
    expect(await repo.run((s) => s.store.shallowCommits())).toEqual(new Set([tip]));
    expect(await repo.fetchBranch('janus/results')).toBeUndefined();
  });

  it('then brings only the new commits, and an idle poll costs one GET', async () => {
    const bare = await v0.createRepo('incremental');
    await pushCommit(bare, 'main', { 'assets/big.bin': randomBytes(256 * 1024).toString('base64') });
    const repo = await GitRepository.open({ location: v0.url('incremental'), cacheDir: await cacheDir() });
    await repo.fetchBranch('main');
    expect(v0.requests('incremental')[1]?.bytesSent).toBeGreaterThan(256 * 1024);

    v0.clearRequests();
    const next = await pushCommit(bare, 'main', { 'transactions/b/transaction.yaml': 'x: 2\n' });
    expect(await repo.fetchBranch('main')).toBe(next);
    const [discovery, pack] = v0.requests('incremental');
    expect(discovery?.path).toBe('info/refs');
    expect(pack?.path).toBe('git-upload-pack');
    expect(pack?.bytesSent).toBeLessThan(4096);

    v0.clearRequests();
    expect(await repo.fetchBranch('main')).toBe(next);
    expect(described(v0, 'incremental')).toEqual(['GET info/refs']);
    expect((await repo.run((s) => s.store.readCommit(next))).parents).toHaveLength(1);
  });

  it('deepens a shallow cache by the commits asked for, relative to its shallow commits', async () => {
    const bare = await v0.createRepo('deepen');
    const commits: string[] = [];
    for (let i = 0; i < 4; i++)
      commits.push(await pushCommit(bare, 'main', { [`transactions/t${i}/transaction.yaml`]: `n: ${i}\n` }));
    const repo = await GitRepository.open({ location: v0.url('deepen'), cacheDir: await cacheDir() });
    expect(await repo.fetchBranch('main')).toBe(commits[3]);
    expect(await repo.run((s) => s.store.shallowCommits())).toEqual(new Set([commits[3]]));
    expect(await repo.run((s) => s.deepen('main', 2))).toBe(true);
    expect(await repo.run((s) => s.store.shallowCommits())).toEqual(new Set([commits[1]]));
    expect((await repo.run((s) => s.store.readCommit(commits[2] ?? ''))).parents).toEqual([commits[1]]);
    expect(await repo.run((s) => s.deepen('main', 10))).toBe(true);
    expect(await repo.run((s) => s.store.shallowCommits())).toEqual(new Set());
    expect((await repo.run((s) => s.store.readCommit(commits[0] ?? ''))).oid).toBe(commits[0]);
    expect(await repo.run((s) => s.deepen('main', 10))).toBe(false);
  });
});

/**
 * The real client, but the answer to the fetch is `pack` (in the protocol the server answered
 * discovery in), instead of the server's: what a hostile server, or a pusher's crafted objects,
 * could make it.
 */
function answeringFetchWith(pack: Buffer): HttpClient {
  const real = createHttpClient();
  return {
    async request(req: GitHttpRequest) {
      const chunks: Uint8Array[] = [];
      for await (const chunk of req.body ?? []) chunks.push(chunk);
      const body = Buffer.concat(chunks);
      const forwarded = await real.request({
        ...req,
        body: (async function* () {
          yield body;
        })(),
      });
      const text = body.toString('latin1');
      const v2Fetch = text.includes('command=fetch');
      const v0Fetch =
        req.method === 'POST' && req.url.endsWith('/git-upload-pack') && !text.includes('command=');
      if (!v2Fetch && !v0Fetch) return forwarded;
      for await (const _ of forwarded.body ?? []); // the real answer, dropped
      const want = /want ([0-9a-f]{40})/.exec(text)?.[1] ?? '';
      const answer = v2Fetch
        ? Buffer.concat([pktLine('packfile\n'), ...sideBand(pack), FLUSH])
        : Buffer.concat([
            ...(text.includes('deepen ') ? [pktLine(`shallow ${want}\n`), FLUSH] : []),
            pktLine('NAK\n'),
            ...sideBand(pack),
            FLUSH,
          ]);
      return {
        ...forwarded,
        body: (async function* () {
          yield answer;
        })(),
      };
    },
  };
}

/** `data` on band 1, in pkt-lines of side-band-64k's size. */
function sideBand(data: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  for (let at = 0; at < data.length; at += 65_515) {
    const payload = Buffer.concat([Buffer.from([1]), data.subarray(at, at + 65_515)]);
    lines.push(
      Buffer.concat([Buffer.from((payload.length + 4).toString(16).padStart(4, '0'), 'latin1'), payload]),
    );
  }
  return lines;
}

/** A pack whose header claims `count` objects (and holds one). */
function claimingObjects(count: number): Buffer {
  const pack = craftPack([{ type: 'blob', content: Buffer.from('x') }]);
  pack.writeUInt32BE(count, 8);
  return pack;
}

const small = Buffer.alloc(1024, 'd');
const zeros = Buffer.alloc(63 * MiB);
/** Each shipped bound of the indexer, as a crafted pack and the refusal it gets. */
const CRAFTED: [string, () => Buffer, RegExp][] = [
  [
    'more objects than 500,000, from the header',
    () => claimingObjects(500_001),
    /the fetched pack holds 500001 objects; Janus indexes packs of at most 500000/,
  ],
  [
    'an object claiming more than 1 GiB, before inflating it',
    () => craftPack([{ type: 'blob', content: Buffer.from('x'), size: GiB + 1 }]),
    /the fetched pack holds an object of 1073741825 bytes \(at offset 12\); Janus reads objects of at most 1073741824 bytes/,
  ],
  [
    'a delta whose result is more than 64 MiB, before building it',
    () =>
      craftPack([
        { type: 'blob', content: small },
        { ofs: 0, delta: craftDelta(small.length, 64 * MiB + 1, [{ copy: 0, size: 10 }]) },
      ]),
    /a delta whose result is 67108865 bytes \(at offset \d+\); Janus resolves deltas of at most 67108864 bytes/,
  ],
  [
    'deltas copying 63 MiB of zeros until they would inflate to more than 4 GiB',
    () =>
      craftPack([
        { type: 'blob', content: zeros },
        ...Array.from({ length: 70 }, (_, i) => ({ ofs: 0, delta: appendDelta(zeros.length, `${i}`) })),
      ]),
    /the fetched pack inflates to more than 4294967296 bytes \(at offset \d+\); Janus indexes packs of at most that/,
  ],
];

describe.each([
  ['version 0', () => v0],
  ['version 2', () => v2],
])('a fetch in protocol %s', (_, server) => {
  it.each(CRAFTED)('refuses %s, and keeps nothing of it', async (name, pack, refusal) => {
    const repoName = `crafted-${name
      .split(' ')
      .slice(0, 3)
      .join('-')
      .replace(/[^a-z0-9-]/g, '')}`;
    const bare = await server().createRepo(repoName);
    const tip = await pushCommit(bare, 'main', { 'transactions/a/transaction.yaml': 'x: 1\n' });
    const cache = await cacheDir();
    const hostile = await GitRepository.open({
      location: server().url(repoName),
      cacheDir: cache,
      http: answeringFetchWith(pack()),
    });
    await expect(hostile.fetchBranch('main')).rejects.toThrow(refusal);
    const honest = await GitRepository.open({ location: server().url(repoName), cacheDir: cache });
    expect(await honest.fetchBranch('main')).toBe(tip);
  });

  it('fails when the pack holds the commit but not its tree, naming what is missing, and keeps nothing', async () => {
    const bare = await server().createRepo('commit-only');
    const tip = await pushCommit(bare, 'main', { 'transactions/a/transaction.yaml': 'x: 1\n' });
    const commitOnly = spawnSync('git', ['pack-objects', '-q', '--stdout'], {
      cwd: bare,
      input: `${tip}\n`,
    }).stdout;
    const cache = await cacheDir();
    const faulty = await GitRepository.open({
      location: server().url('commit-only'),
      cacheDir: cache,
      http: answeringFetchWith(commitOnly),
    });
    await expect(faulty.fetchBranch('main')).rejects.toThrow(
      new RegExp(`lacks object [0-9a-f]{40}, named by ${tip}; nothing of it was kept`),
    );
    // The tracking ref did not move: an honest fetch brings the tree.
    const honest = await GitRepository.open({ location: server().url('commit-only'), cacheDir: cache });
    expect(await honest.fetchBranch('main')).toBe(tip);
    const entry = await honest.run(async (session) =>
      session.store.resolvePath(
        (await session.store.readCommit(tip)).tree,
        'transactions/a/transaction.yaml',
      ),
    );
    expect(entry?.type).toBe('blob');
  });
});

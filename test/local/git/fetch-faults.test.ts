/**
 * A fetch answered wrongly: the real git http-backend serves the capabilities and the branch's
 * tip, and the fetch's answer is replaced in transit by what a faulty server (or something in
 * front of it) could send. Janus must not move its tracking ref onto objects it did not receive,
 * and a later honest answer must bring them.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GitHttpRequest, HttpClient } from 'isomorphic-git';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { limitDuration } from '../../../src/git/http-client.ts';
import { createHttpClient, FetchDeadlineError, GitRepository } from '../../../src/git/index.ts';
import { FLUSH, pktLine } from '../../../src/git/receive-pack-protocol.ts';
import { type GitServer, pushCommit, startGitServer } from '../../support/git/git-server.ts';

let scratch: string;
let server: GitServer;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'janus-test-'));
  server = await startGitServer();
});
afterAll(async () => {
  await server.stop();
  await rm(scratch, { recursive: true, force: true });
});

/** The real client, but the fetch command's answer is `answer` instead of the server's. */
function answeringFetchWith(answer: Buffer): HttpClient {
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
      if (!body.includes('command=fetch')) return forwarded;
      for await (const _ of forwarded.body ?? []); // the real answer, dropped
      return {
        ...forwarded,
        body: (async function* () {
          yield answer;
        })(),
      };
    },
  };
}

/** A fetch response whose packfile section holds `pack`. */
function packAnswer(pack: Buffer): Buffer {
  const lines = [pktLine('packfile\n')];
  for (let at = 0; at < pack.length; at += 60_000) {
    const data = Buffer.concat([Buffer.from([1]), pack.subarray(at, at + 60_000)]);
    lines.push(Buffer.concat([Buffer.from((data.length + 4).toString(16).padStart(4, '0'), 'latin1'), data]));
  }
  return Buffer.concat([...lines, FLUSH]);
}

async function repository(name: string): Promise<{ bare: string; tip: string; cache: string }> {
  const bare = await server.createRepo(name);
  const tip = await pushCommit(bare, 'main', { 'transactions/a/transaction.yaml': 'x: 1\n' });
  return { bare, tip, cache: await mkdtemp(join(scratch, 'cache-')) };
}

describe('a fetch whose answer lacks objects', () => {
  it('fails naming what is missing when the pack holds the commit but not its tree, and keeps nothing', async () => {
    const { bare, tip, cache } = await repository('commit-only');
    const commitOnly = spawnSync('git', ['pack-objects', '-q', '--stdout'], {
      cwd: bare,
      input: `${tip}\n`,
    }).stdout;
    const faulty = await GitRepository.open({
      location: server.url('commit-only'),
      cacheDir: cache,
      http: answeringFetchWith(packAnswer(commitOnly)),
    });
    await expect(faulty.fetchBranch('main')).rejects.toThrow(
      new RegExp(`lacks object [0-9a-f]{40}, named by ${tip}; nothing of it was kept`),
    );

    // The ref did not move: the next (honest) poll fetches again and can read the tree.
    server.clearRequests();
    const honest = await GitRepository.open({ location: server.url('commit-only'), cacheDir: cache });
    expect(await honest.fetchBranch('main')).toBe(tip);
    expect(server.requests('commit-only').filter((r) => r.method === 'POST')).toHaveLength(2);
    const entry = await honest.run(async (session) =>
      session.store.resolvePath(
        (await session.store.readCommit(tip)).tree,
        'transactions/a/transaction.yaml',
      ),
    );
    expect(entry?.type).toBe('blob');
  });

  it('fails when the answer holds no pack at all', async () => {
    const { cache } = await repository('no-pack');
    const faulty = await GitRepository.open({
      location: server.url('no-pack'),
      cacheDir: cache,
      http: answeringFetchWith(Buffer.from('0000', 'latin1')),
    });
    await expect(faulty.fetchBranch('main')).rejects.toThrow(/lacks the wanted commit [0-9a-f]{40}/);
  });
});

describe('a server that sends its answer a few bytes at a time', () => {
  it('is given up on at the deadline, though every byte came within the idle timeout', async () => {
    const drip = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-git-upload-pack-result' });
      const timer = setInterval(() => res.write('0'), 20);
      res.on('close', () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => drip.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(drip.address() as AddressInfo).port}/repo.git/git-upload-pack`;
      const http = limitDuration(createHttpClient({ idleTimeoutMs: 5_000 }), 300);
      const reading = (async () => {
        const res = await http.request({ url, method: 'POST', headers: {} });
        for await (const _ of res.body ?? []);
      })();
      await expect(reading).rejects.toThrow(FetchDeadlineError);
      await expect(reading).rejects.toThrow(/the fetch took longer than 0.3s in all and was stopped/);
      // The operation's later requests fail at once.
      await expect(http.request({ url, method: 'POST', headers: {} })).rejects.toThrow(FetchDeadlineError);
    } finally {
      drip.closeAllConnections();
      await new Promise((resolve) => drip.close(resolve));
    }
  });
});

describe('a server that closes kept-alive connections as they are reused', () => {
  /** Answers the first request of each connection, and resets the connection at its second. */
  async function closingServer(): Promise<{
    url: string;
    connections: () => number;
    stop: () => Promise<void>;
  }> {
    const sockets = new Set<Socket>();
    let connections = 0;
    const server = createTcpServer((socket) => {
      connections++;
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      let requests = 0;
      socket.on('data', (chunk) => {
        requests += chunk.toString('latin1').split('HTTP/1.1\r\n').length - 1;
        if (requests === 1)
          socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
        else if (requests > 1) socket.resetAndDestroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/repo.git`,
      connections: () => connections,
      stop: async () => {
        for (const socket of sockets) socket.destroy();
        await new Promise((resolve) => server.close(resolve));
      },
    };
  }
  const text = async (body: AsyncIterableIterator<Uint8Array> | undefined) => {
    const chunks: Uint8Array[] = [];
    for await (const chunk of body ?? []) chunks.push(chunk);
    return Buffer.concat(chunks).toString();
  };

  it('sends a request that only reads once more, on a new connection', async () => {
    const server = await closingServer();
    try {
      const http = createHttpClient();
      const first = await http.request({ url: `${server.url}/info/refs?service=git-upload-pack` });
      expect(await text(first.body)).toBe('ok');
      const body = (async function* () {
        yield Buffer.from('0014command=ls-refs\n0000');
      })();
      const second = await http.request({ url: `${server.url}/git-upload-pack`, method: 'POST', body });
      expect(await text(second.body)).toBe('ok');
      expect(server.connections()).toBe(2);
    } finally {
      await server.stop();
    }
  });

  it('sends it once more on a connection of its own, not on another of the pool', async () => {
    const server = await closingServer();
    try {
      const http = createHttpClient();
      // Two connections kept alive, both to be reset at their next request.
      const warm = await Promise.all([1, 2].map(() => http.request({ url: `${server.url}/info/refs` })));
      for (const res of warm) expect(await text(res.body)).toBe('ok');
      expect(server.connections()).toBe(2);
      const again = await http.request({ url: `${server.url}/info/refs` });
      expect(await text(again.body)).toBe('ok');
      expect(server.connections()).toBe(3);
    } finally {
      await server.stop();
    }
  });

  it('does not send a push twice: it fails, for the results writer to find out what landed', async () => {
    const server = await closingServer();
    try {
      const http = createHttpClient();
      await text((await http.request({ url: `${server.url}/info/refs?service=git-receive-pack` })).body);
      const body = (async function* () {
        yield Buffer.from('0000');
      })();
      await expect(
        http.request({ url: `${server.url}/git-receive-pack`, method: 'POST', body }),
      ).rejects.toMatchObject({ code: 'ECONNRESET' });
      expect(server.connections()).toBe(1);
    } finally {
      await server.stop();
    }
  });
});

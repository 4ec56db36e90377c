import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { WebhookRequestHandler } from '../../../src/webhook/index.ts';
import { serversClosedAfterEach } from './harness.ts';

const start = serversClosedAfterEach();

describe('close', () => {
  it('ends idle keep-alive connections and stops accepting new ones', async () => {
    const { url, server } = await start();
    const { port } = new URL(url);
    const socket = connect(Number(port), '127.0.0.1');
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const answered = new Promise<string>((resolve) => socket.once('data', (chunk) => resolve(String(chunk))));
    socket.write('GET /healthz HTTP/1.1\r\nHost: ops\r\nConnection: keep-alive\r\n\r\n');
    expect(await answered).toMatch(/^HTTP\/1\.1 200 /);

    await server.close();
    await ended;

    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    await expect(server.close()).resolves.toBeUndefined();
  });

  it('lets a request in flight finish, then closes its keep-alive connection', async () => {
    const release = Promise.withResolvers<void>();
    const handling = Promise.withResolvers<void>();
    const webhook: WebhookRequestHandler = (_req, res) => {
      handling.resolve();
      void release.promise.then(() => res.end('done'));
    };
    const { url, server } = await start({ webhook });
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    let response = '';
    socket.on('data', (chunk) => {
      response += String(chunk);
    });
    socket.write('POST /webhook HTTP/1.1\r\nHost: ops\r\nContent-Length: 0\r\n\r\n');
    await handling.promise;

    const closed = server.close();
    release.resolve();
    await closed;
    await ended;

    expect(response).toMatch(/^HTTP\/1\.1 200 /);
    expect(response.toLowerCase()).toContain('\r\nconnection: close\r\n');
    expect(response).toMatch(/\r\n\r\ndone$/);
  });
});

/** The bounds of one analysis request, against a local HTTP server that misbehaves on purpose. */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AnalysisRequestError, boundedGet } from '../../../src/analysis/http-get.ts';

let server: Server | undefined;
afterEach(async () => {
  const open = server;
  server = undefined;
  if (!open) return;
  open.closeAllConnections();
  await new Promise((resolve) => open.close(resolve));
});

async function serve(handler: RequestListener): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe('boundedGet', () => {
  it('refuses an answer over its size limit, declared or streamed, naming the address', async () => {
    const declared = await serve((_, res) =>
      res.writeHead(200, { 'content-length': 2048 }).end('x'.repeat(2048)),
    );
    expect(await refusal(boundedGet(`${declared}/big?q=1`, { maxBytes: 1024 }))).toEqual(
      new AnalysisRequestError(`${declared}/big: answer of 2048 bytes is over the 1024-byte limit`),
    );
    server?.close();
    const streamed = await serve((_, res) => {
      res.writeHead(200);
      for (let i = 0; i < 4; i++) res.write('x'.repeat(512));
      res.end();
    });
    expect(await refusal(boundedGet(streamed, { maxBytes: 1024 }))).toEqual(
      new AnalysisRequestError(`${streamed}/: answer over the 1024-byte limit`),
    );
  });

  it('gives up on a server that does not answer within the timeout', async () => {
    const silent = await serve(() => {});
    expect(await refusal(boundedGet(silent, { timeoutMs: 200 }))).toEqual(
      new AnalysisRequestError(`${silent}/: no answer within 0.2s`),
    );
  });

  it('follows no redirect: the credentials stay with the address the check names', async () => {
    let followed = false;
    const address = await serve((req, res) => {
      if (req.url === '/elsewhere') followed = true;
      res.writeHead(302, { location: '/elsewhere' }).end();
    });
    expect((await boundedGet(address, { headers: { authorization: 'Bearer t' } })).status).toBe(302);
    expect(followed).toBe(false);
  });

  it('tries once more when the connection is lost under the request (a kept-alive one the server just closed)', async () => {
    let requests = 0;
    const address = await serve((req, res) => {
      requests++;
      if (requests === 1) req.socket.destroy();
      else res.writeHead(200).end('ok');
    });
    expect(await boundedGet(address)).toEqual({ status: 200, body: 'ok' });
    expect(requests).toBe(2);
    // Twice in a row: a measurement error naming it, not a loop.
    requests = 0;
    const broken = await serve((req) => {
      requests++;
      req.socket.destroy();
    });
    const error = await refusal(boundedGet(broken));
    expect((error as Error).message).toMatch(new RegExp(`^${broken}/: other side closed`));
    expect(requests).toBe(2);
  });

  it('names a connection that fails', async () => {
    const address = await serve(() => {});
    server?.close();
    const error = await refusal(boundedGet(address));
    expect(error).toBeInstanceOf(AnalysisRequestError);
    expect((error as Error).message).toMatch(new RegExp(`^${address}/: .*ECONNREFUSED`));
  });

  it.each([
    ['ftp://prometheus/', '"ftp://prometheus/": only http and https addresses are queried'],
    [
      'http://user:pw@prometheus/',
      'http://prometheus/: put credentials in a Secret (credentials), not in the URL',
    ],
    ['prometheus:9090', '"prometheus:9090": only http and https addresses are queried'],
    ['not a url', '"not a url" is not a URL'],
  ])('refuses %s before any request', async (url, message) => {
    expect(((await refusal(boundedGet(url))) as Error).message).toBe(message);
  });
});

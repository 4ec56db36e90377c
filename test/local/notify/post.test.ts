/** One delivery request against a real local HTTP server: signature, no redirects, timeout, bounds. */
import { createHmac } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProviderConfig } from '../../../src/notify/config.ts';
import { DeliveryError, post } from '../../../src/notify/post.ts';

const seen: { path: string; headers: IncomingMessage['headers']; body: string }[] = [];
const ROUTES: Record<string, (res: ServerResponse) => void> = {
  '/ok': (res) => res.writeHead(204).end(),
  '/redirect': (res) => res.writeHead(302, { location: '/ok' }).end(),
  '/huge-error': (res) => res.writeHead(500).end('e'.repeat(1024 * 1024)),
  '/not-found': (res) => res.writeHead(404).end('no such hook'),
  '/slow': () => {}, // never answers
};

let base = '';
let dir = '';
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    seen.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
    (ROUTES[req.url ?? ''] ?? ((r: ServerResponse) => r.writeHead(418).end()))(res);
  });
});

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = await mkdtemp(join(tmpdir(), 'janus-post-'));
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const provider = (fields: Partial<ProviderConfig>): ProviderConfig => ({
  name: 'p',
  type: 'cloudevents',
  resolveAfterMs: 1,
  timeoutMs: 5_000,
  ...fields,
});
const payload = { contentType: 'application/cloudevents+json', body: '{"id":"x"}' };

async function failure(p: ProviderConfig): Promise<DeliveryError> {
  const error = await post(p, payload).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(DeliveryError);
  return error as DeliveryError;
}

describe('post', () => {
  it('sends the body signed with the key read from its file, and the address from its file', async () => {
    await writeFile(join(dir, 'key'), 'secret\n');
    await writeFile(join(dir, 'url'), `${base}/ok\n`);
    await post(provider({ addressFile: join(dir, 'url'), secretFile: join(dir, 'key') }), payload);
    const request = seen.at(-1);
    expect(request?.body).toBe(payload.body);
    expect(request?.headers['content-type']).toBe(payload.contentType);
    expect(request?.headers['x-signature']).toBe(
      `sha256=${createHmac('sha256', 'secret').update(payload.body).digest('hex')}`,
    );
  });

  it('follows no redirect: a 3xx is a failure no retry changes', async () => {
    const before = seen.length;
    const error = await failure(provider({ address: `${base}/redirect` }));
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('HTTP 302');
    expect(seen.slice(before).map((r) => r.path)).toEqual(['/redirect']);
  });

  it('retries a 5xx, keeping 512 characters of its answer; gives up on a 404', async () => {
    const huge = await failure(provider({ address: `${base}/huge-error` }));
    expect(huge.retryable).toBe(true);
    expect(huge.message.length).toBeLessThan(700);
    const missing = await failure(provider({ address: `${base}/not-found` }));
    expect(missing.retryable).toBe(false);
    expect(missing.message).toBe(`${base}: HTTP 404: no such hook`);
  });

  it('gives up a request after the timeout, as a failure a retry may fix', async () => {
    const error = await failure(provider({ address: `${base}/slow`, timeoutMs: 200 }));
    expect(error).toMatchObject({ retryable: true, message: `${base}: no answer within 200 ms` });
  });

  it('refuses an address file that holds no http(s) URL, naming the file but not its content', async () => {
    await writeFile(join(dir, 'bad-url'), 'file:///etc/passwd');
    const error = await failure(provider({ addressFile: join(dir, 'bad-url') }));
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('bad-url');
    expect(error.message).not.toContain('passwd');
  });
});

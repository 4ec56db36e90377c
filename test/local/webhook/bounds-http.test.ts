/**
 * Issue 21, finding 8: the webhook faces the Internet and every request is unauthenticated until
 * its whole body is hashed. What one request may hold (memory, a place, time) is bounded, and a
 * flood of slow senders does not keep a Git host's delivery out.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readBody } from '../../../src/webhook/read-body.ts';
import { post, pushBody, SECRET, SENDERS, startWebhookServer, type WebhookServer } from './harness.ts';

const github = SENDERS.find((s) => s.name === 'github');
const WELL_FORMED_SIGNATURE = `sha256=${'0'.repeat(64)}`;
const servers: WebhookServer[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function server(options: Parameters<typeof startWebhookServer>[0]): Promise<WebhookServer> {
  const s = await startWebhookServer(options);
  servers.push(s);
  return s;
}

/** A sender that declares `length` bytes, sends a few and then nothing: what it is told, as it comes. */
async function slowSender(
  url: string,
  length: number,
  headers = `X-Hub-Signature-256: ${WELL_FORMED_SIGNATURE}`,
) {
  const socket = connect(Number(new URL(url).port), '127.0.0.1');
  sockets.push(socket);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  let answer = '';
  socket.on('data', (d) => {
    answer += d.toString('latin1');
  });
  socket.on('error', () => {});
  socket.write(
    `POST /webhook/generic HTTP/1.1\r\nHost: x\r\n${headers}\r\nContent-Length: ${length}\r\n\r\n{"r`,
  );
  return { status: () => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0), answer: () => answer };
}

describe('what a webhook request may hold', () => {
  it('refuses an unsigned request on its headers, before reading a byte of its body', async () => {
    const s = await server({});
    const sender = await slowSender(s.url, 4 * 1024 * 1024, 'X-GitHub-Event: push');
    await vi.waitFor(() => expect(sender.status()).toBe(401), { timeout: 10_000 });
    expect(sender.answer()).toContain('missing signature');
    expect(s.results).toEqual([['generic', 'unauthorized']]);
  });

  it('streams a signed body larger than it keeps through the HMAC, and still triggers', async () => {
    const s = await server({ keepBodyBytes: 64 * 1024 });
    const body = JSON.stringify({ ref: 'refs/heads/main', commits: 'x'.repeat(2 * 1024 * 1024) });
    const res = await post(`${s.url}/webhook/github`, body, github?.headers(body, SECRET) ?? {});
    expect(res.status).toBe(202);
    // Its ref was never read (the body was not kept): a poll of the watched branch, whatever it is.
    expect(s.triggers).toEqual([{ provider: 'github', ref: undefined, deliveryId: expect.any(String) }]);
    const forged = await post(`${s.url}/webhook/github`, body, github?.headers(`${body} `, SECRET) ?? {});
    expect(forged.status).toBe(401);
  });

  it('keeps at most keepBytes of a body in memory, whatever its size, and hashes every byte', async () => {
    const body = randomBytes(3 * 1024 * 1024);
    const results: Awaited<ReturnType<typeof readBody>>[] = [];
    const http = createServer((req: IncomingMessage, res) => {
      void readBody(req, {
        maxBytes: 25 * 1024 * 1024,
        keepBytes: 64 * 1024,
        timeoutMs: 60_000,
        hmacKey: SECRET,
      })
        .then((r) => results.push(r))
        .finally(() => res.end());
    });
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    try {
      const port = (http.address() as { port: number }).port;
      await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body });
      expect(results).toEqual([
        {
          kind: 'complete',
          body: undefined,
          bytes: body.length,
          hmac: createHmac('sha256', SECRET).update(body).digest(),
        },
      ]);
    } finally {
      http.closeAllConnections();
      http.close();
    }
  });

  it('refuses a declared body over the limit with 413 before reading it', async () => {
    const s = await server({});
    const sender = await slowSender(s.url, 25 * 1024 * 1024 + 1);
    await vi.waitFor(() => expect(sender.status()).toBe(413), { timeout: 10_000 });
    expect(s.results).toEqual([['generic', 'payload_too_large']]);
  });

  it('answers 408 and closes when the body does not arrive in time', async () => {
    const s = await server({ bodyTimeoutMs: 200 });
    const sender = await slowSender(s.url, 1000);
    await vi.waitFor(() => expect(sender.status()).toBe(408), { timeout: 10_000 });
    expect(s.results).toEqual([['generic', 'timed_out']]);
  });
});

describe('how many webhook requests are served at once', () => {
  it('refuses slow senders past maxInFlight with 503 and Retry-After', async () => {
    const s = await server({ maxInFlight: 8, shedAfterMs: 3_600_000 });
    const senders: Awaited<ReturnType<typeof slowSender>>[] = [];
    for (let i = 0; i < 20; i++) senders.push(await slowSender(s.url, 1000));
    await vi.waitFor(() => expect(senders.filter((x) => x.status() === 503)).toHaveLength(12), {
      timeout: 10_000,
    });
    expect(senders.slice(0, 8).map((x) => x.status())).toEqual(Array(8).fill(0)); // still held
    expect(senders.find((x) => x.status() === 503)?.answer()).toMatch(/retry-after: 1/i);
    expect(s.results.filter(([, o]) => o === 'busy')).toHaveLength(12);
  });

  it('lets a valid delivery through while slow senders fill every place', async () => {
    const s = await server({ maxInFlight: 8, shedAfterMs: 0 });
    const senders: Awaited<ReturnType<typeof slowSender>>[] = [];
    for (let i = 0; i < 120; i++) senders.push(await slowSender(s.url, 1000));
    // Each newcomer displaced the oldest: never more than 8 held, the others told 503.
    await vi.waitFor(() => expect(senders.filter((x) => x.status() === 503)).toHaveLength(112), {
      timeout: 20_000,
    });
    const body = pushBody('main');
    const res = await post(`${s.url}/webhook/github`, body, github?.headers(body, SECRET) ?? {});
    expect(res.status).toBe(202);
    expect(s.triggers.map((t) => t.ref)).toEqual(['refs/heads/main']);
  });
});

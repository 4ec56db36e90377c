import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  AUTH_HEADERS,
  post,
  pushBody,
  SECRET,
  SENDERS,
  startWebhookServer,
  WATCHED_BRANCH,
  type WebhookServer,
} from './harness.ts';

let server: WebhookServer;

beforeEach(async () => {
  server = await startWebhookServer();
});

afterEach(async () => {
  await server.close();
});

describe.each(SENDERS)('$name push webhook', (sender) => {
  const body = pushBody(WATCHED_BRANCH);

  it('triggers a poll for a correctly signed push to the watched branch', async () => {
    const res = await post(`${server.url}/webhook`, body, sender.headers(body, SECRET));

    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({ status: 'triggered' });
    expect(server.triggers).toHaveLength(1);
    expect(server.triggers[0]).toMatchObject({ provider: sender.provider, ref: 'refs/heads/main' });
    expect(server.results).toEqual([[sender.provider, 'triggered']]);
  });

  it('triggers at its own path /webhook/<provider> as well', async () => {
    const res = await post(`${server.url}/webhook/${sender.path}`, body, sender.headers(body, SECRET));

    expect(res.status).toBe(202);
    expect(server.triggers).toHaveLength(1);
  });

  it('rejects a signature made with another secret', async () => {
    const res = await post(`${server.url}/webhook`, body, sender.headers(body, `${SECRET}x`));

    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'invalid signature' });
    expect(server.triggers).toHaveLength(0);
    expect(server.results).toEqual([[sender.provider, 'unauthorized']]);
  });

  it('rejects a request without the signature header', async () => {
    const headers = Object.fromEntries(
      Object.entries(sender.headers(body, SECRET)).filter(([name]) => !AUTH_HEADERS.includes(name)),
    );

    const res = await post(`${server.url}/webhook/${sender.path}`, body, headers);

    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'missing signature' });
    expect(server.triggers).toHaveLength(0);
  });

  it('acknowledges a push to another branch without triggering', async () => {
    const other = pushBody('feature/x');

    const res = await post(`${server.url}/webhook`, other, sender.headers(other, SECRET));

    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      status: 'ignored',
      reason: 'refs/heads/feature/x is not the watched branch refs/heads/main',
    });
    expect(server.triggers).toHaveLength(0);
    expect(server.results).toEqual([[sender.provider, 'ignored']]);
  });

  it('refuses a body over the size limit with 413, before reading it', async () => {
    const small = await startWebhookServer({ maxBodyBytes: 1024 });
    try {
      const big = JSON.stringify({ ref: 'refs/heads/main', padding: 'x'.repeat(2048) });

      const res = await post(`${small.url}/webhook`, big, sender.headers(big, SECRET));

      expect(res.status).toBe(413);
      expect(await res.json()).toEqual({ error: 'body exceeds 1024 bytes' });
      expect(small.triggers).toHaveLength(0);
      expect(small.results).toEqual([[sender.provider, 'payload_too_large']]);
    } finally {
      await small.close();
    }
  });

  it('answers 405 to anything but POST', async () => {
    const res = await fetch(`${server.url}/webhook/${sender.path}`, {
      method: 'PUT',
      body,
      headers: sender.headers(body, SECRET),
    });

    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    expect(server.triggers).toHaveLength(0);
  });
});

// GitLab is absent: its X-Gitlab-Token is the secret itself and covers no body (TLS protects it).
describe.each(SENDERS.filter((sender) => sender.signsBody))('$name body integrity', (sender) => {
  it('rejects a body changed after signing', async () => {
    const body = pushBody(WATCHED_BRANCH);
    const tampered = body.replace('"after":"aaaa', '"after":"bbbb');
    expect(tampered).not.toBe(body);

    const res = await post(`${server.url}/webhook`, tampered, sender.headers(body, SECRET));

    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'invalid signature' });
    expect(server.triggers).toHaveLength(0);
  });
});

describe('ping', () => {
  it('answers a signed GitHub ping with 200 and does not trigger', async () => {
    const body = JSON.stringify({ zen: 'Design for failure.', hook_id: 1 });
    const headers = { ...SENDERS[0]!.headers(body, SECRET), 'x-github-event': 'ping' };

    const res = await post(`${server.url}/webhook`, body, headers);

    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'pong' });
    expect(server.triggers).toHaveLength(0);
    expect(server.results).toEqual([['github', 'ping']]);
  });

  it('answers a generic ping (X-Janus-Event: ping) with 200', async () => {
    const headers = { ...SENDERS[4]!.headers('', SECRET), 'x-janus-event': 'ping' };

    const res = await post(`${server.url}/webhook/generic`, '', headers);

    expect(res.status).toBe(200);
    expect(server.triggers).toHaveLength(0);
  });

  it('still requires a valid signature on a ping', async () => {
    const body = JSON.stringify({ zen: 'Keep it logically awesome.' });
    const headers = { ...SENDERS[0]!.headers(body, 'wrong'), 'x-github-event': 'ping' };

    const res = await post(`${server.url}/webhook`, body, headers);

    expect(res.status).toBe(401);
  });
});

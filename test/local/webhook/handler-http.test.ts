import { connect } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createWebhookHandler } from '../../../src/webhook/index.ts';
import {
  hmacHex,
  post,
  pushBody,
  SECRET,
  startWebhookServer,
  WATCHED_BRANCH,
  type WebhookServer,
} from './harness.ts';

const githubHeaders = (body: string, event = 'push'): Record<string, string> => ({
  'x-github-event': event,
  'x-github-delivery': 'delivery-1',
  'x-hub-signature-256': `sha256=${hmacHex(SECRET, body)}`,
});
const genericHeaders = (body: string): Record<string, string> => ({
  'x-janus-signature': `sha256=${hmacHex(SECRET, body)}`,
});

let server: WebhookServer;

beforeEach(async () => {
  server = await startWebhookServer();
});

afterEach(async () => {
  await server.close();
});

describe('routing', () => {
  it('answers 404 for an unknown provider path and does not trigger', async () => {
    const body = pushBody(WATCHED_BRANCH);

    const res = await post(`${server.url}/webhook/bitbucket`, body, githubHeaders(body));

    expect(res.status).toBe(404);
    expect(server.triggers).toHaveLength(0);
    expect(server.results).toEqual([['unknown', 'not_found']]);
  });

  it('uses the provider named in the path over the headers', async () => {
    const body = pushBody(WATCHED_BRANCH);

    // Signed the GitHub way but posted to the GitLab path: GitLab wants X-Gitlab-Token.
    const res = await post(`${server.url}/webhook/gitlab`, body, githubHeaders(body));

    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({ error: 'missing signature' });
  });

  it('ignores the query string and a trailing slash', async () => {
    const body = pushBody(WATCHED_BRANCH);

    const res = await post(`${server.url}/webhook/github/?source=test`, body, githubHeaders(body));

    expect(res.status).toBe(202);
    expect(server.triggers).toHaveLength(1);
  });

  it('serves a custom base path', async () => {
    const custom = await startWebhookServer({ basePath: '/webhook/janus' });
    try {
      const body = pushBody(WATCHED_BRANCH);
      const res = await post(`${custom.url}/webhook/janus/github`, body, githubHeaders(body));
      expect(res.status).toBe(202);
      expect(custom.triggers).toHaveLength(1);
    } finally {
      await custom.close();
    }
  });
});

describe('events', () => {
  it('acknowledges a non-push event without triggering', async () => {
    const body = JSON.stringify({ action: 'opened' });

    const res = await post(`${server.url}/webhook`, body, githubHeaders(body, 'pull_request'));

    expect(res.status).toBe(202);
    expect(await res.json()).toEqual({
      status: 'ignored',
      reason: 'event "pull_request" does not trigger a poll',
    });
    expect(server.triggers).toHaveLength(0);
  });

  it('ignores a tag push even when the tag has the watched branch name', async () => {
    const body = JSON.stringify({ ref: 'refs/tags/main' });

    const res = await post(`${server.url}/webhook`, body, githubHeaders(body));

    expect(res.status).toBe(202);
    expect(server.triggers).toHaveLength(0);
  });

  it('answers 400 to a signed push that is not JSON', async () => {
    const body = `payload=${encodeURIComponent(pushBody(WATCHED_BRANCH))}`;

    const res = await post(`${server.url}/webhook`, body, githubHeaders(body));

    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: 'body is not JSON: set the webhook content type to application/json',
    });
    expect(server.triggers).toHaveLength(0);
  });

  it('passes the delivery id to the trigger', async () => {
    const body = pushBody(WATCHED_BRANCH);

    await post(`${server.url}/webhook`, body, githubHeaders(body));

    expect(server.triggers).toEqual([
      { provider: 'github', ref: 'refs/heads/main', deliveryId: 'delivery-1' },
    ]);
  });

  it('lets a generic sender trigger with an empty body', async () => {
    const res = await post(`${server.url}/webhook/generic`, '', genericHeaders(''));

    expect(res.status).toBe(202);
    expect(server.triggers).toEqual([{ provider: 'generic', ref: undefined, deliveryId: undefined }]);
  });

  it('accepts the branch as a full ref and the secret as a Buffer', async () => {
    const custom = await startWebhookServer({ branch: 'refs/heads/release', secret: Buffer.from(SECRET) });
    try {
      const body = pushBody('release');
      const res = await post(`${custom.url}/webhook`, body, githubHeaders(body));
      expect(res.status).toBe(202);
      expect(custom.triggers).toHaveLength(1);
    } finally {
      await custom.close();
    }
  });
});

describe('limits and failures', () => {
  it('cuts off a chunked body that grows past the limit with 413', async () => {
    const small = await startWebhookServer({ maxBodyBytes: 1024 });
    try {
      const chunk = new TextEncoder().encode('x'.repeat(512));
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 4; i++) controller.enqueue(chunk);
          controller.close();
        },
      });

      const res = await fetch(`${small.url}/webhook/generic`, {
        method: 'POST',
        body: stream,
        duplex: 'half',
        headers: { 'x-janus-signature': `sha256=${'0'.repeat(64)}` },
      } as RequestInit);

      expect(res.status).toBe(413);
      expect(small.results).toEqual([['generic', 'payload_too_large']]);
    } finally {
      await small.close();
    }
  });

  it('answers 500 when the trigger throws, so the Git host shows a failed delivery', async () => {
    const failing = await startWebhookServer({
      onTrigger: () => {
        throw new Error('poller stopped');
      },
    });
    try {
      const body = pushBody(WATCHED_BRANCH);
      const res = await post(`${failing.url}/webhook`, body, githubHeaders(body));
      expect(res.status).toBe(500);
      expect(failing.results).toEqual([['github', 'error']]);
    } finally {
      await failing.close();
    }
  });

  it('survives a client that disconnects halfway through the body', async () => {
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    // A well-formed signature: only the body's HMAC can tell it is wrong, so the body is read.
    const signature = `X-Hub-Signature-256: sha256=${'0'.repeat(64)}`;
    socket.write(
      `POST /webhook/github HTTP/1.1\r\nHost: x\r\n${signature}\r\nContent-Length: 100\r\n\r\n{"ref":`,
    );

    await vi.waitFor(() => expect(server.requestsSeen()).toBe(1), { timeout: 10_000 });
    socket.destroy();

    await vi.waitFor(() => expect(server.results).toEqual([['github', 'aborted']]), { timeout: 10_000 });
    expect(server.triggers).toHaveLength(0);
    const res = await fetch(`${server.url}/webhook/github`, { method: 'GET' });
    expect(res.status).toBe(405);
  });

  it('leaves other routes of the server alone', async () => {
    const res = await fetch(`${server.url}/metrics`);

    expect(await res.text()).toBe('other route');
    expect(server.results).toHaveLength(0);
  });
});

describe('createWebhookHandler', () => {
  const onTrigger = (): void => {};

  it('refuses to build an endpoint without a secret', () => {
    expect(() => createWebhookHandler({ secret: '', branch: 'main', onTrigger })).toThrow(/secret is empty/);
    expect(() => createWebhookHandler({ secret: Buffer.alloc(0), branch: 'main', onTrigger })).toThrow(
      /secret is empty/,
    );
  });

  it('refuses an empty branch and a non-positive body limit', () => {
    expect(() => createWebhookHandler({ secret: 's', branch: ' ', onTrigger })).toThrow(/branch is empty/);
    expect(() => createWebhookHandler({ secret: 's', branch: 'main', onTrigger, maxBodyBytes: 0 })).toThrow(
      /maxBodyBytes/,
    );
  });
});

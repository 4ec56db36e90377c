import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../../src/metrics/index.ts';
import { createWebhookHandler, type WebhookTrigger } from '../../../src/webhook/index.ts';
import { sampleValue, scrape } from '../../unit/metrics/query.ts';
import { serversClosedAfterEach, type TestOpsServer } from './harness.ts';

const start = serversClosedAfterEach();

describe('webhooks', () => {
  const secret = 'ops-server-test-secret';
  const body = JSON.stringify({ ref: 'refs/heads/main', after: 'a'.repeat(40) });
  const signed = {
    'content-type': 'application/json',
    'x-github-event': 'push',
    'x-hub-signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
  };

  /** The real webhook handler, counted the way the main job wires it. */
  async function startWithWebhook(): Promise<TestOpsServer & { triggers: WebhookTrigger[] }> {
    const triggers: WebhookTrigger[] = [];
    const metrics = new Metrics();
    const webhook = createWebhookHandler({
      secret,
      branch: 'main',
      onTrigger: (trigger) => triggers.push(trigger),
      onResult: metrics.webhookRequest,
    });
    return { ...(await start({ metrics, webhook })), triggers };
  }

  it('delegates /webhook/<provider> to the handler, which triggers and is counted', async () => {
    const { url, triggers } = await startWithWebhook();

    const res = await fetch(`${url}/webhook/github`, { method: 'POST', body, headers: signed });
    const scraped = await scrape({ text: async () => (await fetch(`${url}/metrics`)).text() });

    expect(res.status).toBe(202);
    expect(triggers).toMatchObject([{ provider: 'github', ref: 'refs/heads/main' }]);
    expect(
      sampleValue(scraped, 'janus_webhook_requests_total', { provider: 'github', outcome: 'triggered' }),
    ).toBe(1);
  });

  it('lets the handler answer other methods on its paths', async () => {
    const { url } = await startWithWebhook();

    const res = await fetch(`${url}/webhook`);

    expect(res.status).toBe(405);
    expect(await res.json()).toEqual({ error: 'method not allowed: use POST' });
  });

  it('answers 404 on /webhook when no handler is configured', async () => {
    const { url } = await start();

    const res = await fetch(`${url}/webhook/github`, { method: 'POST', body, headers: signed });

    expect(res.status).toBe(404);
  });
});

/** The webhook on a listener of its own serves /webhook and nothing else: no metrics, no probes. */
import { afterEach, describe, expect, it } from 'vitest';
import { type OpsServer, startWebhookServer } from '../../../src/server/index.ts';
import type { WebhookRequestHandler } from '../../../src/webhook/index.ts';

const servers: OpsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('startWebhookServer', () => {
  it('hands /webhook and /webhook/<provider> to the handler and answers 404 for everything else', async () => {
    const seen: string[] = [];
    const webhook: WebhookRequestHandler = (req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(202).end();
    };
    const server = await startWebhookServer({ port: 0, host: '127.0.0.1', webhook });
    servers.push(server);

    expect((await fetch(`${server.url}/webhook`, { method: 'POST', body: '{}' })).status).toBe(202);
    expect((await fetch(`${server.url}/webhook/github?x=1`, { method: 'POST', body: '{}' })).status).toBe(
      202,
    );
    for (const path of ['/metrics', '/healthz', '/livez', '/readyz', '/', '/webhooks']) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.text()).toBe('not found\n');
    }
    expect(seen).toEqual(['POST /webhook', 'POST /webhook/github?x=1']);
  });
});

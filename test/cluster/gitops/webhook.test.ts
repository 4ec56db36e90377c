/**
 * The webhook nudges the poller: with an hour between polls, only a correctly signed delivery can
 * explain a directory being applied within the test. A bad signature triggers nothing.
 */
import { describe, expect, it } from 'vitest';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  configMap,
  serviceAccount,
  txnRef,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { deliverWebhook, PUSH_TO_MAIN, signWebhook, webhookSecretArgs } from '../../support/git/webhook.ts';
import {
  configMapYaml,
  createTestRepo,
  directory,
  successfulPolls,
  useGitServer,
  useJanus,
} from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'webhook');
const server = useGitServer();
const janus = useJanus(clients);

async function metric(url: string, line: RegExp): Promise<number> {
  return Number(line.exec(await (await fetch(`${url}/metrics`)).text())?.[1] ?? 0);
}

describe('webhook', () => {
  it('polls at once on a signed push to the watched branch, and ignores bad or irrelevant deliveries', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    const repo = await createTestRepo(server.server);
    const run = await janus.start({
      repo: repo.url,
      namespace: ns.name,
      pollInterval: '1h',
      args: await webhookSecretArgs(),
    });
    const ops = await run.opsUrl();
    await repo.push(
      directory('hooked', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }),
    );

    const forged = await deliverWebhook(ops, PUSH_TO_MAIN, signWebhook(PUSH_TO_MAIN, 'not-the-secret'));
    expect(forged.status).toBe(401);
    expect(await forged.json()).toEqual({ error: 'invalid signature' });
    const elsewhere = JSON.stringify({ ref: 'refs/heads/feature' });
    const other = await deliverWebhook(ops, elsewhere);
    expect(other.status).toBe(202);
    expect(await other.json()).toMatchObject({ status: 'ignored' });
    expect(await successfulPolls(run)).toBe(1);
    expect(await clients.admin.find(txnRef(ns.name, 'hooked'))).toBeUndefined();

    const signed = await deliverWebhook(ops, PUSH_TO_MAIN);
    expect(signed.status).toBe(202);
    expect(await signed.json()).toEqual({ status: 'triggered' });
    await waitForPhase(clients.admin, ns.name, 'hooked', 'Committed');
    await eventually(async () => expect(await successfulPolls(run)).toBe(2));
    expect(
      await metric(ops, /^janus_webhook_requests_total\{provider="generic",outcome="unauthorized"\} (\d+)/m),
    ).toBe(1);
    expect(
      await metric(ops, /^janus_webhook_requests_total\{provider="generic",outcome="triggered"\} (\d+)/m),
    ).toBe(1);
    const ready = await fetch(`${ops}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.text()).toContain('[+]git-reachable ok');
  });

  it('serves no webhook without a secret', async () => {
    const repo = await createTestRepo(server.server);
    const run = await janus.start({ repo: repo.url, namespace: ns.name, pollInterval: '1h' });
    const response = await deliverWebhook(await run.opsUrl(), PUSH_TO_MAIN);
    expect(response.status).toBe(404);
    expect(await successfulPolls(run)).toBe(1);
  });
});

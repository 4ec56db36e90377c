/**
 * --webhook-bind-address: the webhook on a listener of its own, which serves nothing else, while
 * the operations listener keeps metrics and probes and no longer answers /webhook. With an hour
 * between polls, only the signed delivery to the webhook listener explains the directory applied.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { ALL_ON_CONFIGMAPS, configMap, serviceAccount, waitForPhase } from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { deliverWebhook, PUSH_TO_MAIN, webhookSecretArgs } from '../../support/git/webhook.ts';
import type { JanusRunProcess } from '../../support/processes/janus-run.ts';
import { configMapYaml, createTestRepo, directory, useGitServer, useJanus } from '../gitops/harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'webhook-listener');
const server = useGitServer();
const janus = useJanus(clients);

/** Where the webhook listener listens, read from the log like the operations server's. */
function webhookUrl(run: JanusRunProcess): Promise<string> {
  return eventually(async () => {
    const url = /"url":"(http:[^"]+)","msg":"webhook server listening"/.exec(
      await readFile(run.logFile, 'utf8'),
    )?.[1];
    if (!url) throw new Error('the webhook server has not started yet');
    return url;
  });
}

describe('the webhook on its own listener', () => {
  it('serves /webhook only there, and nothing else there', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    const repo = await createTestRepo(server.server);
    const run = await janus.start({
      repo: repo.url,
      namespace: ns.name,
      pollInterval: '1h',
      args: [...(await webhookSecretArgs()), '--webhook-bind-address', '127.0.0.1:0'],
    });
    const ops = await run.opsUrl();
    const hooks = await webhookUrl(run);
    expect(hooks).not.toBe(ops);

    // The webhook listener exposes nothing but the webhook.
    for (const path of ['/metrics', '/healthz', '/readyz', '/']) {
      expect((await fetch(`${hooks}${path}`)).status, path).toBe(404);
    }
    // The operations listener no longer answers /webhook, even a correctly signed delivery.
    expect((await deliverWebhook(ops, PUSH_TO_MAIN)).status).toBe(404);
    expect((await fetch(`${ops}/metrics`)).status).toBe(200);
    expect((await fetch(`${ops}/readyz`)).status).toBe(200);

    await repo.push(
      directory('hooked', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }),
    );
    const forged = await deliverWebhook(hooks, PUSH_TO_MAIN, `sha256=${'0'.repeat(64)}`);
    expect(forged.status).toBe(401);
    const signed = await deliverWebhook(hooks, PUSH_TO_MAIN);
    expect(signed.status).toBe(202);
    expect(await signed.json()).toEqual({ status: 'triggered' });
    await waitForPhase(clients.admin, ns.name, 'hooked', 'Committed');
    expect(await (await fetch(`${ops}/metrics`)).text()).toMatch(
      /^janus_webhook_requests_total\{provider="generic",outcome="triggered"\} 1$/m,
    );
  });
});

/**
 * The webhook nudges the poller: with an hour between polls, only a correctly signed delivery can
 * explain a directory being applied within the test. A bad signature triggers nothing.
 */
import { createHmac } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../support/eventually.ts';
import { useClients, useNamespace } from '../../support/kube.ts';
import { ALL_ON_CONFIGMAPS, configMap, serviceAccount, txnRef, waitForPhase } from '../../support/saga.ts';
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

const SECRET = 'a-long-random-webhook-secret';
const sign = (secret: string, body: string) =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

async function deliver(url: string, body: string, signature: string): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-janus-signature': signature },
    body,
  });
}

async function metric(url: string, line: RegExp): Promise<number> {
  return Number(line.exec(await (await fetch(`${url}/metrics`)).text())?.[1] ?? 0);
}

describe('webhook', () => {
  it('polls at once on a signed push to the watched branch, and ignores bad or irrelevant deliveries', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    const repo = await createTestRepo(server.server);
    const secretFile = join(await mkdtemp(join(tmpdir(), 'janus-secret-')), 'webhook-secret');
    await writeFile(secretFile, `${SECRET}\n`);
    const run = await janus.start({
      repo: repo.url,
      namespace: ns.name,
      pollInterval: '1h',
      args: ['--webhook-secret-file', secretFile],
    });
    const ops = await run.opsUrl();
    const hook = `${ops}/webhook/generic`;
    await repo.push(
      directory('hooked', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }),
    );
    const push = JSON.stringify({ ref: 'refs/heads/main' });

    const forged = await deliver(hook, push, sign('not-the-secret', push));
    expect(forged.status).toBe(401);
    expect(await forged.json()).toEqual({ error: 'invalid signature' });
    const elsewhere = JSON.stringify({ ref: 'refs/heads/feature' });
    const other = await deliver(hook, elsewhere, sign(SECRET, elsewhere));
    expect(other.status).toBe(202);
    expect(await other.json()).toMatchObject({ status: 'ignored' });
    expect(await successfulPolls(run)).toBe(1);
    expect(await clients.admin.find(txnRef(ns.name, 'hooked'))).toBeUndefined();

    const signed = await deliver(hook, push, sign(SECRET, push));
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
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    const response = await deliver(`${await run.opsUrl()}/webhook/generic`, body, sign(SECRET, body));
    expect(response.status).toBe(404);
    expect(await successfulPolls(run)).toBe(1);
  });
});

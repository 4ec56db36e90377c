/**
 * `janus ui` in a real browser (Debian's Chromium, driven by playwright-core) against the real
 * control plane and the controller as its own process: the list follows a transaction live by
 * its stream (the page sends no request of its own meanwhile), the bake window's bar moves, a
 * rollback asked for on the page shows its reverse order, a user without the right gets the API
 * server's refusal, and a user who may read only namespace A sees nothing of B.
 *
 * JANUS_UI_SCREENSHOTS=1 writes the screenshots of docs/ui/ on the way.
 */
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Change } from '../../../src/api/v1alpha1/index.ts';
import { PatchType } from '../../../src/kube/client.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { type Browser, launchBrowser, screenshot } from '../../support/browser.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import {
  ALL_ON_CONFIGMAPS,
  configMap,
  getTxn,
  grantRole,
  testNamespace,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { newImage } from '../../support/cluster/web-shop.ts';
import { availableWith, deployment } from '../../support/cluster/workloads.ts';
import { eventually } from '../../support/eventually.ts';
import { type ControllerProcess, startController } from '../../support/processes/controller-process.ts';
import { startUi, type UiProcess } from '../../support/processes/janus-ui.ts';

const clients = useClients();
const DEPLOYER = [ALL_ON_CONFIGMAPS, { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] }];

let nsA: string;
let nsB: string;
let controller: ControllerProcess;
let admin: UiProcess;
let alice: UiProcess;
let browser: Browser;
let smoke: { url: string; close(): Promise<void> };

/** A smoke test on a loopback port: 200, but 503 the second time it is asked. */
async function smokeTest(): Promise<{ url: string; close(): Promise<void> }> {
  let asked = 0;
  const server = createServer((_req, res) => {
    res.writeHead(++asked === 2 ? 503 : 200).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/checkout`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Two ConfigMap changes, each to `<name>-a` and `<name>-b`, made first. */
async function twoChanges(ns: string, name: string): Promise<Change[]> {
  for (const suffix of ['a', 'b']) {
    await clients.admin.create(configMap(ns, `${name}-${suffix}`, { value: 'before' }));
  }
  return ['a', 'b'].map((suffix) => ({
    target: { apiVersion: 'v1', kind: 'ConfigMap', name: `${name}-${suffix}` },
    type: 'Patch',
    content: { data: { value: 'after' } },
  }));
}

/** A page signed in to `ui` (the URL with the secret), then at `hash`. */
async function open(ui: UiProcess, hash: string): Promise<Page> {
  const page = await browser.page();
  page.setDefaultTimeout(90_000);
  await page.goto(ui.url);
  await page.goto(`${new URL(ui.url).origin}/${hash}`);
  return page;
}

beforeAll(async () => {
  nsA = await testNamespace(clients.admin, 'ui-a', { deployer: DEPLOYER });
  nsB = await testNamespace(clients.admin, 'ui-b', { deployer: [ALL_ON_CONFIGMAPS] });
  await clients.admin.create(deployment(nsA, 'web', POD_IMAGES.ready));
  // Alice may read namespace A's Transactions and their Events, and nothing in B; she may not patch them.
  await grantRole(
    clients.admin,
    nsA,
    'ui-reader',
    [
      { apiGroups: ['tx.janus.io'], resources: ['transactions'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['get', 'list', 'watch'] },
    ],
    { kind: 'User', name: clients.users.alice, apiGroup: 'rbac.authorization.k8s.io' },
  );
  smoke = await smokeTest();
  controller = await startController({
    kubeconfig: clients.kubeconfigs.controller,
    namespace: nsA,
    logLevel: 'info',
    analysisAllowedAddresses: [new URL(smoke.url).origin],
  });
  [admin, alice, browser] = await Promise.all([
    startUi(clients.kubeconfigs.admin, ['-A']),
    startUi(clients.kubeconfigs.alice, ['-n', nsA]),
    launchBrowser(),
  ]);
  await availableWith(clients.admin, nsA, 'web', POD_IMAGES.ready);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await Promise.all([admin?.stop(), alice?.stop(), controller?.stop(), smoke?.close()]);
  for (const ns of [nsA, nsB]) {
    if (ns) await clients.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => {});
  }
});

const row = (page: Page, ns: string, name: string) => page.locator(`tr[data-key="${ns}/${name}"]`);

describe('janus ui in a browser', () => {
  it('refuses a request without the secret, and from another origin', async () => {
    const origin = new URL(admin.url).origin;
    const anonymous = await fetch(`${origin}/api/info`);
    expect(anonymous.status).toBe(401);
    const cookie = await signedInCookie(admin.url);
    const crossSite = await fetch(`${origin}/api/request/transaction/${nsA}/any`, {
      method: 'POST',
      headers: { cookie, origin: 'http://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ request: 'rollback' }),
    });
    expect(crossSite.status).toBe(403);
    // DNS rebinding: the right cookie, but the request names another host.
    expect(await rawGet(`${origin}/api/info`, { cookie, host: 'evil.example' })).toBe(403);
    expect(await rawGet(`${origin}/api/info`, { cookie })).toBe(200);
    const page = await fetch(`${origin}/`, { headers: { cookie } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
  });

  it('changes the list live while a transaction runs, by its stream alone', async () => {
    const page = await open(admin, `#/?namespace=${nsA}`);
    await page
      .locator('#tx-count')
      .filter({ hasText: `in namespace ${nsA}` })
      .waitFor();
    const requests: string[] = [];
    page.on('request', (r) => {
      const path = new URL(r.url()).pathname;
      if (path.startsWith('/api/')) requests.push(path);
    });

    await clients.admin.create(transaction(nsA, 'live', await twoChanges(nsA, 'live')));
    await row(page, nsA, 'live').waitFor();
    await page.locator(`tr[data-key="${nsA}/live"][data-phase="Committed"]`).waitFor();
    expect(await row(page, nsA, 'live').textContent()).toContain('2/2');
    // Nothing was asked for: the rows came down the stream that was already open.
    expect(requests).toEqual([]);
    await page.close();
  });

  it('moves the bake window bar while the rollout bakes, and charts the smoke test measured in it', async () => {
    await clients.admin.create(
      transaction(nsA, 'release-v2', [newImage(POD_IMAGES.readyAlternative)], {
        health: {
          stableFor: '40s',
          analysis: [{ check: { name: 'smoke', interval: '2s', failureLimit: 3, http: { url: smoke.url } } }],
        },
      }),
    );
    const page = await open(admin, `#/t/${nsA}/release-v2`);
    const bar = page.locator('progress.bake');
    await bar.waitFor({ timeout: 120_000 });
    const first = Number(await bar.getAttribute('value'));
    await eventually(
      async () => expect(Number(await bar.getAttribute('value'))).toBeGreaterThan(first + 1000),
      {
        timeoutMs: 60_000,
      },
    );
    expect(await page.locator('.bake-text').textContent()).toMatch(/stable for \d+s of 40s/);
    // The smoke test's second answer is a 503: one failed measurement among passed ones.
    await page.locator('figure.analysis circle.chart-bad').waitFor();
    await page.locator('figure.analysis circle.chart-ok').first().waitFor();
    expect(await page.locator('figure.analysis figcaption').textContent()).toMatch(
      /^smoke: \d+ measured, 1 failed/,
    );
    await screenshot(page, 'transaction-baking');
    await page.locator('dl.summary .phase-Committed').waitFor({ timeout: 120_000 });
    await page.close();
  });

  it('rolls back from the page and shows the reverse order, with each change undone', async () => {
    await clients.admin.create(transaction(nsA, 'undo-me', await twoChanges(nsA, 'undo-me')));
    await waitForPhase(clients.admin, nsA, 'undo-me', 'Committed');
    const page = await open(admin, `#/t/${nsA}/undo-me`);
    // With the keyboard alone: the button, the reason, then Tab past "Keep as is" to confirm
    // (Enter in the reason field would keep things as they are: the safe default).
    await page.locator('#action-rollback').focus();
    await page.keyboard.press('Enter');
    await page.keyboard.type('checkout is slow');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await page.locator(':focus').getAttribute('id')).toBe('confirm-go');
    await page.keyboard.press('Enter');
    await page.locator('#action-result').filter({ hasText: 'rollback of' }).waitFor();
    await page.locator('dl.summary .badge', { hasText: 'RolledBack' }).waitFor({ timeout: 120_000 });
    const undo = page.locator('#undo-order li');
    await eventually(async () => {
      expect(await undo.evaluateAll((items) => items.map((i) => i.getAttribute('data-index')))).toEqual([
        '1',
        '0',
      ]);
      expect(await undo.allTextContents()).toEqual([
        expect.stringContaining('rolled-back'),
        expect.stringContaining('rolled-back'),
      ]);
    });
    // The prior state, as the undo restored it.
    await page.locator('#diff-button-0').click();
    await page.locator('#diff-0 .line.del', { hasText: 'value: before' }).waitFor();
    await page.locator('#diff-0 .line.add', { hasText: 'value: after' }).waitFor();
    await page.locator('.timeline', { hasText: 'RollbackRequestedByUser' }).waitFor();
    await screenshot(page, 'transaction-rolled-back');
    expect((await getTxn(clients.admin, nsA, 'undo-me')).status?.phase).toBe('RolledBack');
    await page.close();
  });

  it("shows the API server's refusal to a user without the right to ask", async () => {
    await clients.admin.create(transaction(nsA, 'not-yours', await twoChanges(nsA, 'not-yours')));
    await waitForPhase(clients.admin, nsA, 'not-yours', 'Committed');
    const page = await open(alice, `#/t/${nsA}/not-yours`);
    await page.locator('#action-rollback').click();
    await page.locator('#confirm-go').click();
    const result = page.locator('#action-result');
    await result.filter({ hasText: 'Refused' }).waitFor();
    expect(await result.textContent()).toMatch(/forbidden/i);
    expect(await result.textContent()).toContain(clients.users.alice);
    const txn = await getTxn(clients.admin, nsA, 'not-yours');
    expect(txn.status?.phase).toBe('Committed');
    expect(txn.metadata.annotations?.['tx.janus.io/request-rollback']).toBeUndefined();
    await page.close();
  });

  it('lists Sources live, and tells a user who may not read them so', async () => {
    const page = await open(admin, '#/sources');
    await sourceIn(nsA, 'shop', 'InProgress');
    const shop = page.locator(`tr[data-key="${nsA}/shop"]`);
    await shop.filter({ hasText: 'InProgress' }).waitFor();
    expect(await shop.textContent()).toContain('kustomize overlays/prod');
    await clients.admin.client.request({
      method: 'PATCH',
      path: `/apis/tx.janus.io/v1alpha1/namespaces/${nsA}/sources/shop/status`,
      contentType: PatchType.merge,
      body: { status: { lastAttempted: { outcome: 'Committed' } } },
    });
    await shop.filter({ hasText: 'Committed' }).waitFor();
    await screenshot(page, 'sources');
    const denied = await open(alice, '#/sources');
    await denied.locator('.problem', { hasText: 'forbidden' }).waitFor();
    expect(await denied.locator('tbody tr').count()).toBe(0);
    await Promise.all([page.close(), denied.close()]);
  });

  it('shows a user who may read only namespace A nothing of namespace B', async () => {
    await clients.admin.create(transaction(nsA, 'visible', await twoChanges(nsA, 'visible')));
    await clients.admin.create(transaction(nsB, 'secret-release', await twoChanges(nsB, 'secret')));
    const page = await open(alice, '#/');
    await row(page, nsA, 'visible').waitFor();
    expect(await page.locator(`tr[data-key^="${nsB}/"]`).count()).toBe(0);
    // Asking for B gets the API server's refusal, and no row.
    await page.locator('#filter-namespace').fill(nsB);
    await page.locator('#filter-namespace').press('Enter');
    const problem = page.locator('.problem');
    await problem.filter({ hasText: 'forbidden' }).waitFor();
    expect(await page.locator('tbody tr').count()).toBe(0);
    // So does the page of a transaction in B.
    await page.goto(`${new URL(alice.url).origin}/#/t/${nsB}/secret-release`);
    await page.locator('.problem', { hasText: 'forbidden' }).waitFor();
    expect(await page.locator('body').textContent()).not.toContain('secret-a');
    await page.close();
  });
});

/** The cookie the server sets for the URL's secret, for requests made outside the browser. */
async function signedInCookie(url: string): Promise<string> {
  const response = await fetch(url, { redirect: 'manual' });
  expect(response.status).toBe(303);
  return (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
}

/** A Source as janus run would write it (the admin may: cluster-admin holds sources/provenance). */
async function sourceIn(ns: string, name: string, outcome: string): Promise<void> {
  const commit = 'c'.repeat(40);
  const created = await clients.admin.create({
    apiVersion: 'tx.janus.io/v1alpha1',
    kind: 'Source',
    metadata: { name, namespace: ns },
    spec: { path: 'overlays/prod', kustomize: {}, serviceAccountName: 'deployer' },
  } as KubeObject);
  await clients.admin.client.request({
    method: 'PUT',
    path: `/apis/tx.janus.io/v1alpha1/namespaces/${ns}/sources/${name}/status`,
    body: {
      ...created,
      status: {
        lastAttempted: {
          revision: commit,
          shortRevision: commit.slice(0, 7),
          outcome,
          transaction: `${name}-ccccccc`,
        },
        drift: { count: 0 },
      },
    },
  });
}

/** A GET with exactly these headers (fetch would set Host itself). */
function rawGet(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on('error', reject)
      .end();
  });
}

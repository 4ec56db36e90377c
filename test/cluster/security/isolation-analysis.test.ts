/**
 * Issue 23's review: what a tenant's metric analysis can make the shared controller reach. The
 * tenant is alice, who may create Transactions (and AnalysisTemplates) in her namespace only; the
 * controller runs as its own process with the shipped RBAC, and the settings a platform team gives
 * it: its Prometheus (a real one) is the only address allowed.
 *
 * - SSRF: before, a check's address or URL made the controller GET anything it could reach (the
 *   cloud metadata address, the kube-apiserver, another tenant's service) and status showed the
 *   answer. A listener here plays such a target and records every request: it must receive none,
 *   whether the address is inline (refused before anything changes) or smuggled in through a
 *   template's argument (refused in the bake window, rolled back), and the status says why,
 *   naming the address and the setting. The allowed Prometheus works as before.
 * - Templates of another namespace: before, templateRef.namespace could name any namespace, read
 *   with the controller's cluster-wide rights, so a tenant ran (and saw in status) another
 *   team's checks. Now only her own namespace and those the platform team shares from.
 * - Issue 34, round 4, item 9: the allow-list was global, so a platform team that allowed team
 *   B's metrics proxy for team B allowed it for team A too. Now an address may be allowed for
 *   some namespaces only (`<namespace glob>=<prefix>`), and a namespace may get a shorter request
 *   timeout (`--analysis-timeout 10s,<glob>=2s`): Prometheus stops evaluating its queries then, and
 *   its slow checks hold their slots no longer. Every query asks for at most 2 series (`limit`).
 *   Both tenants' transactions run under one controller (an instance of their own, so it watches
 *   every namespace without touching other tests' Transactions); the neighbour's commits.
 */

import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnalysisRef, Transaction } from '../../../src/api/v1alpha1/index.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import { getTxn, grantRole, testNamespace, transaction } from '../../support/cluster/saga.ts';
import { eventMessage, newImage, webShop, withWebController } from '../../support/cluster/web-shop.ts';
import { availableWith } from '../../support/cluster/workloads.ts';
import { eventually } from '../../support/eventually.ts';
import { withController } from '../../support/processes/controller-process.ts';
import { type MetricsExporter, startMetricsExporter } from '../../support/servers/metrics-exporter.ts';
import { startPrometheus, type TestPrometheus } from '../../support/servers/prometheus.ts';

const clients = useClients();
let exporter: MetricsExporter;
let prometheus: TestPrometheus;
/** Plays an address no tenant may reach through the controller: the metadata service, say. */
let forbidden: { address: string; requests: string[]; server: Server };
/** Plays a metrics proxy that never answers (a query Prometheus is still evaluating). */
let stalled: { address: string; requests: string[]; server: Server };

beforeAll(async () => {
  exporter = await startMetricsExporter();
  prometheus = await startPrometheus({ targets: [exporter.target] });
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"success","data":{"resultType":"scalar","result":[0,"0"]}}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  forbidden = { address: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, server };
  const stalledRequests: string[] = [];
  const stalledServer = createServer((req) => stalledRequests.push(`${req.method} ${req.url}`));
  await new Promise<void>((resolve) => stalledServer.listen(0, '127.0.0.1', resolve));
  stalled = {
    address: `http://127.0.0.1:${(stalledServer.address() as AddressInfo).port}`,
    requests: stalledRequests,
    server: stalledServer,
  };
}, 600_000); // a cold cache builds Prometheus first

afterAll(async () => {
  stalled?.server.closeAllConnections();
  await new Promise((resolve) => stalled?.server.close(resolve));
  await new Promise((resolve) => forbidden?.server.close(resolve));
  await prometheus?.stop();
  await exporter?.stop();
});

/** The platform team's settings: its Prometheus, and templates shared from `shared`. */
const settings = (shared: string[] = []) => ({
  analysisAllowedAddresses: [prometheus.address],
  analysisTemplateNamespaces: shared,
});

/** alice may create Transactions and AnalysisTemplates in `ns`, and run them as its deployer. */
async function tenant(ns: string): Promise<void> {
  await grantRole(
    clients.admin,
    ns,
    'tenant',
    [
      {
        apiGroups: ['tx.janus.io'],
        resources: ['transactions', 'analysistemplates'],
        verbs: ['create', 'get'],
      },
      {
        apiGroups: [''],
        resources: ['serviceaccounts'],
        verbs: ['impersonate'],
        resourceNames: ['deployer'],
      },
    ],
    { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: clients.users.alice },
  );
}

function template(namespace: string, name: string, check: Record<string, unknown>, args: unknown[] = []) {
  return {
    apiVersion: 'tx.janus.io/v1alpha1',
    kind: 'AnalysisTemplate',
    metadata: { name, namespace },
    spec: { args, checks: [{ name: 'check', interval: '1s', ...check }] },
  };
}

const upCheck = { prometheus: { address: '', query: 'vector(1)', failWhen: 'result < 1' } };

/** alice's release of "web" with this analysis, once it has ended whichever way. */
async function release(ns: string, analysis: AnalysisRef[], stableFor = '10s'): Promise<Transaction> {
  await clients.alice.create(
    transaction(ns, 'release-v2', [newImage(POD_IMAGES.readyAlternative)], {
      health: { stableFor, analysis },
    }),
  );
  return eventually(
    async () => {
      const txn = await getTxn(clients.admin, ns, 'release-v2');
      expect(['Committed', 'RolledBack', 'Failed']).toContain(txn.status?.phase);
      return txn;
    },
    { timeoutMs: 180_000, intervalMs: 100 },
  );
}

const ready = (txn: Transaction) => txn.status?.conditions?.find((c) => c.type === 'Ready');

describe("a tenant's analysis reaches only what the platform team allowed", () => {
  it('never queries an inline address not allowed: Failed before anything changes, naming address and setting', async () => {
    const ns = await webShop(clients, 'ssrf-inline');
    await tenant(ns);
    forbidden.requests.length = 0;
    const url = `${forbidden.address}/latest/meta-data/iam/security-credentials/`;
    const txn = await withWebController(
      clients,
      ns,
      () => release(ns, [{ check: { name: 'metadata', interval: '1s', http: { url } } }]),
      settings(),
    );
    expect(forbidden.requests).toEqual([]);
    expect(txn.status?.phase).toBe('Failed');
    expect(ready(txn)?.reason).toBe('AnalysisNotAllowed');
    expect(ready(txn)?.message).toContain(`the controller does not query ${url}`);
    expect(ready(txn)?.message).toContain('--analysis-allowed-addresses');
    expect(ready(txn)?.message).toContain(`allowed: ${prometheus.address}`);
    expect(txn.status?.health?.analysis).toBeUndefined();
    await availableWith(clients.admin, ns, 'web', POD_IMAGES.ready); // never rolled
  });

  it("never queries an address a template's argument smuggles in: the window fails and rolls back, naming it", async () => {
    const ns = await webShop(clients, 'ssrf-template');
    await tenant(ns);
    forbidden.requests.length = 0;
    await clients.alice.create(
      template(ns, 'up', { prometheus: { ...upCheck.prometheus, address: '{{args.prometheus}}' } }, [
        { name: 'prometheus', value: prometheus.address },
      ]),
    );
    const analysis = [
      { templateRef: { name: 'up' }, args: [{ name: 'prometheus', value: forbidden.address }] },
    ];
    const txn = await withWebController(clients, ns, () => release(ns, analysis), settings());
    expect(forbidden.requests).toEqual([]);
    expect(txn.status?.phase).toBe('RolledBack');
    // The status says why (the rollback's cause), and so does the AnalysisFailed Event.
    expect(ready(txn)?.message).toContain(`the controller does not query ${forbidden.address}/`);
    const failed = await eventMessage(clients, ns, 'AnalysisFailed');
    expect(failed).toContain(`check "check": the controller does not query ${forbidden.address}/`);
    expect(failed).toContain('--analysis-allowed-addresses');
    await availableWith(clients.admin, ns, 'web', POD_IMAGES.ready);
  });

  it('queries the allowed Prometheus as before, from a template the platform team shares', async () => {
    const platform = await testNamespace(clients.admin, 'platform-analysis');
    await clients.admin.create(
      template(platform, 'up', { prometheus: { ...upCheck.prometheus, address: prometheus.address } }),
    );
    const ns = await webShop(clients, 'analysis-allowed');
    await tenant(ns);
    const txn = await withWebController(
      clients,
      ns,
      () => release(ns, [{ templateRef: { name: 'up', namespace: platform } }], '5s'),
      settings([platform]),
    );
    expect(txn.status?.phase).toBe('Committed');
    expect(txn.status?.health?.analysis?.[0]).toMatchObject({ name: 'check', failed: 0 });
    expect(txn.status?.health?.analysis?.[0]?.measurements?.at(-1)).toMatchObject({
      phase: 'Passed',
      value: 1,
    });
  });

  it("refuses another team's template: Failed before anything changes, naming template and setting", async () => {
    const payments = await testNamespace(clients.admin, 'payments');
    await clients.admin.create(
      template(payments, 'payments-errors', {
        prometheus: { ...upCheck.prometheus, address: prometheus.address },
      }),
    );
    const ns = await webShop(clients, 'analysis-cross');
    await tenant(ns);
    const txn = await withWebController(
      clients,
      ns,
      () => release(ns, [{ templateRef: { name: 'payments-errors', namespace: payments } }]),
      settings(),
    );
    expect(txn.status?.phase).toBe('Failed');
    expect(ready(txn)?.reason).toBe('AnalysisNotAllowed');
    expect(ready(txn)?.message).toContain(`AnalysisTemplate "${payments}/payments-errors" may not be used`);
    expect(ready(txn)?.message).toContain('--analysis-template-namespaces');
    expect(txn.status?.health?.analysis).toBeUndefined();
    await availableWith(clients.admin, ns, 'web', POD_IMAGES.ready);
  });
});

/** A release of "web" in `ns` by `who`, for the controller of `instance`, with this analysis. */
async function labelledRelease(
  who: 'alice' | 'admin',
  ns: string,
  instance: string,
  analysis: AnalysisRef[],
): Promise<void> {
  await clients[who].create(
    transaction(ns, 'release-v2', [newImage(POD_IMAGES.readyAlternative)], {
      instance,
      health: { stableFor: '5s', analysis },
    }),
  );
}

/** Waits until `ns`'s release has ended, whichever way. */
const ended = (ns: string, timeoutMs = 180_000) =>
  eventually(
    async () => {
      const txn = await getTxn(clients.admin, ns, 'release-v2');
      expect(['Committed', 'RolledBack', 'Failed']).toContain(txn.status?.phase);
      return txn;
    },
    { timeoutMs, intervalMs: 100 },
  );

/** One controller for both teams' namespaces: an instance of its own, watching every namespace. */
function withSharedController<T>(
  instance: string,
  settings: { addresses: string[]; timeout?: string },
  body: () => Promise<T>,
): Promise<T> {
  return withController(
    {
      kubeconfig: clients.kubeconfigs.controller,
      logLevel: 'info',
      analysisAllowedAddresses: settings.addresses,
      instance,
      ...(settings.timeout && { env: { JANUS_ANALYSIS_TIMEOUT: settings.timeout } }),
    },
    body,
  );
}

/** vector(1) must be 1; the recording listener answers 0, so its check is `result > 0`. */
const promCheck = (address: string, failWhen = 'result < 1'): AnalysisRef => ({
  check: { name: 'up', interval: '1s', prometheus: { address, query: 'vector(1)', failWhen } },
});

describe('addresses and bounds per namespace', () => {
  it("team A cannot make the controller query team B's metrics proxy; team B's release beside it commits", async () => {
    const [teamA, teamB] = [await webShop(clients, 'iso-team-a'), await webShop(clients, 'iso-team-b')];
    await tenant(teamA);
    const instance = `iso-ns-${randomBytes(3).toString('hex')}`;
    forbidden.requests.length = 0;
    // The platform team's settings: A's checks go to the real Prometheus, B's to B's own proxy.
    const addresses = [`${teamA}=${prometheus.address}`, `${teamB}=${forbidden.address}`];
    await withSharedController(instance, { addresses }, async () => {
      await labelledRelease('alice', teamA, instance, [promCheck(forbidden.address)]);
      const refused = await ended(teamA);
      expect(forbidden.requests).toEqual([]);
      expect(refused.status?.phase).toBe('Failed');
      expect(ready(refused)?.reason).toBe('AnalysisNotAllowed');
      expect(ready(refused)?.message).toContain(`the controller does not query ${forbidden.address}/`);
      expect(ready(refused)?.message).toContain(`for namespace "${teamA}"`);
      // Only team A's own address is named: B's is B's to know.
      expect(ready(refused)?.message).toContain(`allowed: ${prometheus.address})`);

      await labelledRelease('admin', teamB, instance, [promCheck(forbidden.address, 'result > 0')]);
      const beside = await ended(teamB, 60_000);
      expect(beside.status?.phase).toBe('Committed');
      // B's queries reached B's proxy, each bounded: Prometheus's own timeout, at most 2 series.
      expect(forbidden.requests.length).toBeGreaterThan(0);
      for (const request of forbidden.requests) expect(request).toMatch(/[?&]timeout=10s&limit=2$/);
    });
    await availableWith(clients.admin, teamA, 'web', POD_IMAGES.ready); // A's never rolled
  });

  it("a namespace's short timeout bounds its stalled checks at that figure; the neighbour's release commits", async () => {
    const [teamA, teamB] = [await webShop(clients, 'iso-slow-a'), await webShop(clients, 'iso-slow-b')];
    const instance = `iso-slow-${randomBytes(3).toString('hex')}`;
    const settings = {
      addresses: [`${teamA}=${stalled.address}`, `${teamB}=${prometheus.address}`],
      timeout: `10s,${teamA}=2s`,
    };
    await withSharedController(instance, settings, async () => {
      await labelledRelease('admin', teamA, instance, [promCheck(stalled.address)]);
      await labelledRelease('admin', teamB, instance, [promCheck(prometheus.address)]);
      const beside = await ended(teamB, 60_000);
      expect(beside.status?.phase).toBe('Committed');
      expect(beside.status?.health?.analysis?.[0]?.measurements?.at(-1)).toMatchObject({ phase: 'Passed' });

      const slow = await ended(teamA);
      // Not measured within its window: not passed silently, rolled back.
      expect(slow.status?.phase).toBe('RolledBack');
      expect(ready(slow)?.message).toContain(
        `could not be measured at the end of the bake window: check "up": check "up": Prometheus at ${stalled.address}/: ${stalled.address}/api/v1/query: no answer within 2s`,
      );
      expect(stalled.requests.length).toBeGreaterThan(0);
      // Each query told Prometheus the same bound.
      for (const request of stalled.requests) expect(request).toMatch(/[?&]timeout=2s&limit=2$/);
    });
  });
});

/** The controller's /metrics, /healthz and /readyz, scraped from the real process after a saga. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { createConfigMaps, patchingEach } from '../../support/cluster/patch-each.ts';
import {
  ALL_ON_CONFIGMAPS,
  cmTarget,
  configMap,
  serviceAccount,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { type ControllerProcess, startController } from '../../support/processes/controller-process.ts';

const clients = useClients();
const ns = useNamespace(clients, 'obs');
let controller: ControllerProcess;

beforeEach(async () => {
  await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
  controller = await startController({ kubeconfig: clients.kubeconfigs.controller, namespace: ns.name });
});
afterEach(async () => {
  await controller.stop();
});

/** `name{labels} value` lines of the exposition text, by name and label set. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const matches = Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`));
    if (matches) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

describe('operations endpoints', () => {
  it('export the saga metrics of SPEC §6 and report readiness', async () => {
    await createConfigMaps(clients.admin, ns.name, ['a', 'b', 'c'], () => ({ v: '1' }));
    await clients.admin.create(patchingEach(ns.name, 'measured', ['a', 'b', 'c'], { v: '2' }));
    await waitForPhase(clients.admin, ns.name, 'measured', 'Committed');
    const url = await controller.opsUrl();

    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.text()).toContain('[+]informers-synced ok');
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    const response = await fetch(`${url}/metrics`);
    expect(response.headers.get('content-type')).toContain('text/plain');
    await response.body?.cancel();
    // The controller counts a transition, and the transaction's duration, once the status write
    // that waitForPhase saw has returned, and releases the locks after it: scrape until they are in.
    const scrape = async () => (await fetch(`${url}/metrics`)).text();
    const transitions = 'janus_transaction_phase_transitions_total';
    const text = await eventually(async () => {
      const t = await scrape();
      expect(sample(t, transitions, { from_phase: 'Committing', to_phase: 'Committed' })).toBe(1);
      expect(sample(t, 'janus_transaction_duration_seconds_count', { outcome: 'Committed' })).toBe(1);
      expect(sample(t, 'janus_lock_operations_total', { operation: 'release', result: 'success' })).toBe(1);
      return t;
    });
    expect(sample(text, transitions, { from_phase: 'Pending', to_phase: 'Preparing' })).toBe(1);
    expect(sample(text, transitions, { from_phase: 'Preparing', to_phase: 'Prepared' })).toBe(1);
    expect(sample(text, transitions, { from_phase: 'Prepared', to_phase: 'Committing' })).toBe(1);
    expect(sample(text, 'janus_item_operations_total', { operation: 'commit', result: 'success' })).toBe(3);
    expect(sample(text, 'janus_item_operations_total', { operation: 'dryrun', result: 'success' })).toBe(3);
    expect(sample(text, 'janus_lock_operations_total', { operation: 'acquire', result: 'success' })).toBe(3);
    expect(sample(text, 'janus_transaction_item_count_sum')).toBe(3);
    // Its installation's Lease: janus-controller-<instance>, the instance named after the namespace.
    expect(sample(text, 'janus_leader', { lease: `janus-system/janus-controller-${ns.name}` })).toBe(1);
    expect(sample(text, 'janus_kube_requests_total', { method: 'PATCH' })).toBeGreaterThan(0);
  });
});

describe('the log at info', () => {
  it('tells the story: one line per phase entered, naming the transaction, the reason and the Git source', async () => {
    await controller.stop();
    const info = await startController({
      kubeconfig: clients.kubeconfigs.controller,
      namespace: ns.name,
      logLevel: 'info',
    });
    try {
      await clients.admin.create(configMap(ns.name, 'story', { v: '1' }));
      await clients.admin.create(
        transaction(
          ns.name,
          'told',
          [{ target: cmTarget('story'), type: 'Patch', content: { data: { v: '2' } } }],
          {
            annotations: {
              'tx.janus.io/source-repository': 'https://git.example.com/shop.git',
              'tx.janus.io/source-revision': `main@sha1:${'a'.repeat(40)}`,
              'tx.janus.io/source-path': 'transactions/told',
            },
          },
        ),
      );
      await waitForPhase(clients.admin, ns.name, 'told', 'Committed');
      // The line for a phase is logged once its status write has returned, after waitForPhase
      // may have seen the phase: read the log until the last line is in.
      const lines = await eventually(async () => {
        const told = (await info.logs())
          .split('\n')
          .filter((l) => l.includes(`"transaction":"${ns.name}/told"`))
          .map((l) => JSON.parse(l) as Record<string, unknown>);
        expect(told.map((l) => [l.level, l.from, l.to, l.reason])).toEqual([
          ['info', 'Pending', 'Preparing', 'Preparing'],
          ['info', 'Preparing', 'Committing', 'Committing'],
          ['info', 'Committing', 'Committed', 'Committed'],
        ]);
        return told;
      });
      for (const l of lines) {
        expect(l).toMatchObject({ source: `main@sha1:${'a'.repeat(40)}`, path: 'transactions/told' });
        expect(l.msg).toMatch(new RegExp(`^${ns.name}/told \\w+ → \\w+: `));
        expect(l).not.toHaveProperty('err');
      }
    } finally {
      await info.stop();
      controller = await startController({ kubeconfig: clients.kubeconfigs.controller, namespace: ns.name });
    }
  });
});

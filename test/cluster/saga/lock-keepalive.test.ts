/**
 * A live holder keeps its lock, however long one request takes: a commit held up far beyond
 * lockTimeout (a slow admission webhook, a slow API server, here a proxy that holds the write)
 * does not let a waiting transaction take the Lease over.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProxy, startApiProxy } from '../../support/cluster/api-proxy.ts';
import { useClients } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  cmTarget,
  configMap,
  data,
  getTxn,
  testNamespace,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { withController } from '../../support/processes/controller-process.ts';

const clients = useClients();
let proxy: ApiProxy;

beforeAll(async () => {
  proxy = await startApiProxy(clients.kubeconfigs.admin);
});
afterAll(async () => {
  await proxy?.close();
});

describe('lock keep-alive', () => {
  it('keeps a Lease held through a commit request that takes three times lockTimeout', async () => {
    const ns = await testNamespace(clients.admin, 'keepalive', { deployer: [ALL_ON_CONFIGMAPS] });
    await clients.admin.create(configMap(ns, 'shared', { owner: 'none' }));
    await clients.admin.create(configMap(ns, 'other', { owner: 'none' }));
    const HOLD_MS = 6_000;
    // The real (not dry-run) write of "shared" by the first transaction is held for 6 s.
    let held = 0;
    proxy.setHold((method, url) => {
      const slow =
        method === 'PATCH' &&
        url.pathname === `/api/v1/namespaces/${ns}/configmaps/shared` &&
        !url.searchParams.has('dryRun') &&
        held === 0;
      if (slow) held++;
      return slow ? HOLD_MS : 0;
    });
    const kubeconfig = await proxy.proxied(clients.kubeconfigs.controller, 'controller');
    try {
      await withController({ kubeconfig, namespace: ns, logLevel: 'info' }, async () => {
        await clients.admin.create(
          transaction(
            ns,
            'slow',
            [
              { target: cmTarget('shared'), type: 'Patch', content: { data: { owner: 'slow' } } },
              { target: cmTarget('other'), type: 'Patch', content: { data: { owner: 'slow' } } },
            ],
            { lockTimeout: '2s' },
          ),
        );
        await eventually(async () => expect(held).toBe(1)); // the slow write is in flight
        await clients.admin.create(
          transaction(
            ns,
            'waiter',
            [{ target: cmTarget('shared'), type: 'Patch', content: { data: { owner: 'waiter' } } }],
            {
              lockTimeout: '2s',
            },
          ),
        );
        // While the slow write is held, the waiter keeps waiting for the live holder.
        await eventually(async () => {
          const waiting = (await getTxn(clients.admin, ns, 'waiter')).status?.conditions?.find(
            (c) => c.type === 'Reconciling',
          );
          expect(waiting?.reason).toBe('LockWait');
          expect(waiting?.message).toContain(`${ns}/slow`);
        });
        const slow = await waitForPhase(clients.admin, ns, 'slow', 'Committed', 60_000);
        expect(slow.status?.items?.every((i) => i.committed && !i.conflict)).toBe(true);
        await waitForPhase(clients.admin, ns, 'waiter', 'Committed', 60_000);
      });
    } finally {
      proxy.setHold(undefined);
    }
    expect(await data(clients.admin, ns, 'shared')).toEqual({ owner: 'waiter' });
    expect(await data(clients.admin, ns, 'other')).toEqual({ owner: 'slow' });
  });
});

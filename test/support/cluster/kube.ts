/** Per-test access to the run's cluster: a client per identity and a fresh namespace per test. */
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, inject } from 'vitest';
import type { Identity } from '../../../src/cli/demo/control-plane.ts';
import { KubeClient } from '../../../src/kube/client.ts';
import { isNotFound } from '../../../src/kube/errors.ts';
import { CORE_MAPPINGS, Discovery, Objects } from '../../../src/kube/resources.ts';
import { grantJanus } from './saga.ts';

export interface TestClients {
  admin: Objects;
  controller: Objects;
  alice: Objects;
  users: Record<Identity, string>;
  kubeconfigs: Record<Identity, string>;
}

/** Clients for the current test file, closed after it. */
export function useClients(): TestClients {
  const info = inject('kube');
  const clients = {} as TestClients;
  const connections: KubeClient[] = [];
  beforeAll(async () => {
    for (const id of ['admin', 'controller', 'alice'] as const) {
      const client = await KubeClient.load({ kubeconfig: info.kubeconfigs[id] });
      const discovery = new Discovery(client);
      for (const m of CORE_MAPPINGS) discovery.seed(m);
      clients[id] = new Objects(client, discovery);
      connections.push(client);
    }
    clients.users = info.users;
    clients.kubeconfigs = info.kubeconfigs;
  });
  afterAll(async () => {
    for (const c of connections) await c.connection.close();
  });
  return clients;
}

/** A namespace of its own for each test, deleted after it (the namespace controller empties it). */
export function useNamespace(
  clients: TestClients,
  prefix = 'test',
  opts: { grantJanus?: boolean } = {},
): { readonly name: string } {
  const current = { name: '' };
  beforeEach(async (ctx) => {
    const slug = ctx.task.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .slice(0, 30)
      .replace(/-+$/, '');
    current.name = `${prefix}-${slug}-${randomBytes(3).toString('hex')}`.replace(/--+/g, '-');
    await clients.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: current.name } });
    if (opts.grantJanus !== false) await grantJanus(clients.admin, current.name);
  });
  afterEach(async () => {
    try {
      await clients.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: current.name });
    } catch (e) {
      if (!isNotFound(e)) throw e;
    }
  });
  return current;
}

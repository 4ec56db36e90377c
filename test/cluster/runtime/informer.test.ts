/** The informer against a real API server: events, selectors, reconnects, 410 recovery, stop. */
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { createLogger } from '../../../src/log/index.ts';
import { Informer, type InformerOptions } from '../../../src/runtime/informer.ts';
import { dropManagedFields, type WatchEndReason } from '../../../src/runtime/watch-stream.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { eventually } from '../../support/eventually.ts';
import { CuttableWatchClient } from './fault-injection.ts';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

const clients = useClients();
const ns = useNamespace(clients, 'rt');
const started: Informer<ConfigMap>[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((i) => i.stop()));
});

/** An informer on the test namespace's ConfigMaps that records what it reports. */
function startInformer(opts: Partial<InformerOptions<ConfigMap>> = {}) {
  const client = new CuttableWatchClient(clients.admin.client);
  const seen: string[] = [];
  const restarts: WatchEndReason[] = [];
  let lists = 0;
  const informer = new Informer<ConfigMap>({
    client,
    path: `/api/v1/namespaces/${ns.name}/configmaps`,
    backoff: { baseMs: 50, capMs: 500, jitter: 0.5 },
    handlers: {
      onAdd: (obj, key) => seen.push(`add ${key} ${obj.data?.v ?? ''}`),
      onUpdate: (old, obj, key) => seen.push(`update ${key} ${old.data?.v ?? ''}->${obj.data?.v ?? ''}`),
      onDelete: (_obj, key) => seen.push(`delete ${key}`),
    },
    metrics: { list: () => lists++, watchRestart: (reason) => restarts.push(reason) },
    ...opts,
  });
  started.push(informer);
  informer.start();
  return { informer, client, seen, restarts, lists: () => lists };
}

function configMap(name: string, v: string, labels: Record<string, string> = {}): ConfigMap {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns.name, labels }, data: { v } };
}

const ref = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace: ns.name });

async function update(name: string, v: string): Promise<void> {
  const current = await clients.admin.get<ConfigMap>(ref(name));
  await clients.admin.replace({ ...current, data: { v } });
}

describe('Informer', () => {
  it('lists, then reports adds, updates and deletes of objects matching its selector', async () => {
    await clients.admin.create(configMap('pre', '1', { app: 'x' }));
    await clients.admin.create(configMap('other', '1'));
    const { informer, seen, client } = startInformer({
      labelSelector: 'app=x',
      transform: dropManagedFields,
    });

    expect(await informer.waitForSync()).toBe(true);
    expect(informer.hasSynced()).toBe(true);
    expect(informer.keys()).toEqual([`${ns.name}/pre`]);
    expect(informer.get(`${ns.name}/pre`)).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      data: { v: '1' },
    });
    expect(informer.get(`${ns.name}/pre`)?.metadata.managedFields).toBeUndefined();

    await clients.admin.create(configMap('new', '1', { app: 'x' }));
    await update('pre', '2');
    await update('other', '2');
    await clients.admin.delete(ref('new'));
    // Watch events arrive in order, so once the delete is seen, an event for `other` would have been too.
    await eventually(() => expect(seen).toContain(`delete ${ns.name}/new`));

    expect(seen).toEqual([
      `add ${ns.name}/pre 1`,
      `add ${ns.name}/new 1`,
      `update ${ns.name}/pre 1->2`,
      `delete ${ns.name}/new`,
    ]);
    expect(informer.list().map((o) => o.data?.v)).toEqual(['2']);
    expect(client.watchQueries[0]).toMatchObject({
      labelSelector: 'app=x',
      allowWatchBookmarks: true,
      resourceVersion: expect.stringMatching(/.+/),
      timeoutSeconds: expect.any(Number),
    });
  });

  it('resumes a dropped watch from the last resourceVersion without relisting', async () => {
    const { informer, client, seen, lists, restarts } = startInformer();
    await informer.waitForSync();
    await clients.admin.create(configMap('a', '1'));
    await eventually(() => expect(seen).toEqual([`add ${ns.name}/a 1`]));

    client.disconnect();
    await clients.admin.create(configMap('b', '1'));
    client.reconnect();

    await eventually(() => expect(informer.keys().sort()).toEqual([`${ns.name}/a`, `${ns.name}/b`]));
    expect(seen).toEqual([`add ${ns.name}/a 1`, `add ${ns.name}/b 1`]);
    expect(lists()).toBe(1);
    expect(restarts).not.toContain('gone');
    const resumedFrom = client.watchQueries.at(-1)?.resourceVersion;
    expect(resumedFrom).toBe(informer.get(`${ns.name}/a`)?.metadata.resourceVersion);
  });

  it.each(['event', 'http'] as const)(
    'relists after 410 Gone (as %s) and reports what changed while it was disconnected, deletes included',
    async (gone) => {
      for (const name of ['kept', 'changed', 'deleted']) await clients.admin.create(configMap(name, '1'));
      const { informer, client, seen, lists, restarts } = startInformer();
      await informer.waitForSync();

      client.disconnect();
      await clients.admin.delete(ref('deleted'));
      await update('changed', '2');
      await clients.admin.create(configMap('added', '1'));
      client.reconnect({ gone });

      await eventually(() =>
        expect(informer.keys().sort()).toEqual([`${ns.name}/added`, `${ns.name}/changed`, `${ns.name}/kept`]),
      );
      expect(informer.get(`${ns.name}/changed`)?.data).toEqual({ v: '2' });
      expect(seen.slice(3).sort()).toEqual([
        `add ${ns.name}/added 1`,
        `delete ${ns.name}/deleted`,
        `update ${ns.name}/changed 1->2`,
      ]);
      expect(restarts).toContain('gone');
      expect(lists()).toBe(2);

      // And it keeps watching after the relist.
      await clients.admin.delete(ref('kept'));
      await eventually(() => expect(seen.at(-1)).toBe(`delete ${ns.name}/kept`));
    },
  );

  it('keeps going when a handler throws or an async handler rejects', async () => {
    const lines: string[] = [];
    const logger = createLogger({
      level: 'error',
      name: 'test',
      version: '0',
      destination: { write: (line: string) => void lines.push(line) },
    });
    const added: string[] = [];
    const { informer } = startInformer({
      logger,
      handlers: {
        onAdd: (obj) => {
          if (obj.metadata.name === 'boom') throw new Error('handler bug');
          added.push(obj.metadata.name);
        },
        onUpdate: async () => {
          throw new Error('async handler bug');
        },
      },
    });
    await informer.waitForSync();

    await clients.admin.create(configMap('boom', '1'));
    await update('boom', '2');
    await clients.admin.create(configMap('after', '1'));

    await eventually(() => expect(added).toEqual(['after']));
    expect(informer.get(`${ns.name}/boom`)?.data).toEqual({ v: '2' });
    await eventually(() => expect(lines).toHaveLength(2));
    const errors = lines.map((l) => JSON.parse(l) as { msg: string; key: string; err: { message: string } });
    expect(errors.map((e) => [e.msg, e.key, e.err.message])).toEqual([
      ['informer handler failed', `${ns.name}/boom`, 'handler bug'],
      ['informer handler failed', `${ns.name}/boom`, 'async handler bug'],
    ]);
  });

  it('re-emits every cached object as an update at each resync', async () => {
    await clients.admin.create(configMap('a', '1'));
    await clients.admin.create(configMap('b', '1'));
    const { informer, seen } = startInformer({ resyncPeriodMs: 100 });
    await informer.waitForSync();

    await eventually(() => {
      for (const key of ['a', 'b']) {
        expect(seen.filter((s) => s === `update ${ns.name}/${key} 1->1`).length).toBeGreaterThanOrEqual(2);
      }
    });
  });

  it('stop() ends the loop and closes its watch stream', async () => {
    const { informer, client } = startInformer();
    await informer.waitForSync();
    await eventually(() => expect(client.openWatches).toBe(1));

    await informer.stop();

    expect(client.openWatches).toBe(0);
    expect(informer.hasSynced()).toBe(true);
    expect(() => informer.start()).toThrow(/stopped/);
  });

  it('retries a failing LIST with backoff until stopped, and then reports that it never synced', async () => {
    // alice may not list ConfigMaps: every LIST is a 403.
    const client = new CuttableWatchClient(clients.alice.client);
    const informer = new Informer<ConfigMap>({
      client,
      path: `/api/v1/namespaces/${ns.name}/configmaps`,
      backoff: { baseMs: 10, capMs: 50, jitter: 0.5 },
    });
    informer.start();

    await eventually(() => expect(client.requests).toBeGreaterThanOrEqual(3));
    await informer.stop();

    expect(await informer.waitForSync()).toBe(false);
    expect(informer.hasSynced()).toBe(false);
    expect(client.watchQueries).toEqual([]);
  });
});

/**
 * Several consumers on one informer (addHandlers), as the Transaction cache is shared by the
 * controller, the results reporter and the notifier: each hears every change; one registered
 * after the LIST first hears of what is cached as adds; one removed hears nothing more. On an
 * in-memory list and watch (the informer against a real API server: test/cluster/runtime).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { WatchEvent } from '../../../src/kube/client.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { Informer, type InformerHandlers, type ListWatchClient } from '../../../src/runtime/informer.ts';

const object = (name: string, resourceVersion: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', resourceVersion },
});

/** A LIST of `listed`, then a watch that delivers what `send` pushes until it is stopped. */
function memoryClient(listed: KubeObject[]) {
  const pending: WatchEvent<KubeObject>[] = [];
  let wake: (() => void) | undefined;
  const client = {
    request: async () => ({ items: listed, metadata: { resourceVersion: '10' } }),
    async *watch(_path: string, _query: unknown, signal: AbortSignal) {
      signal.addEventListener('abort', () => wake?.(), { once: true });
      while (!signal.aborted) {
        const event = pending.shift();
        if (event) yield event;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    },
  } as unknown as ListWatchClient;
  return {
    client,
    send(event: WatchEvent<KubeObject>) {
      pending.push(event);
      wake?.();
    },
  };
}

/** Handlers that write down what they hear. */
function recorder(): { heard: string[]; handlers: InformerHandlers<KubeObject> } {
  const heard: string[] = [];
  return {
    heard,
    handlers: {
      onAdd: (_obj, key) => heard.push(`add ${key}`),
      onUpdate: (_old, obj, key) => heard.push(`update ${key} ${obj.metadata.resourceVersion}`),
      onDelete: (_obj, key) => heard.push(`delete ${key}`),
    },
  };
}

const informers: Informer[] = [];
afterEach(async () => {
  await Promise.all(informers.splice(0).map((i) => i.stop()));
});

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setImmediate(r));
  expect(check()).toBe(true);
}

describe('Informer.addHandlers', () => {
  it('tells every registration of every change, in the order they registered', async () => {
    const { client, send } = memoryClient([object('a', '1')]);
    const informer = new Informer({ client, path: '/api/v1/configmaps', resyncPeriodMs: 0 });
    informers.push(informer);
    const first = recorder();
    const second = recorder();
    informer.addHandlers(first.handlers);
    informer.addHandlers(second.handlers);
    informer.start();
    await informer.waitForSync();
    send({ type: 'MODIFIED', object: object('a', '2') });
    await until(() => second.heard.length === 2);

    expect(first.heard).toEqual(['add ns/a', 'update ns/a 2']);
    expect(second.heard).toEqual(first.heard);
  });

  it('tells one that registers after the LIST of every cached object as an add, then of changes', async () => {
    const { client, send } = memoryClient([object('a', '1'), object('b', '1')]);
    const informer = new Informer({ client, path: '/api/v1/configmaps', resyncPeriodMs: 0 });
    informers.push(informer);
    informer.start();
    await informer.waitForSync();
    const late = recorder();

    informer.addHandlers(late.handlers);
    expect(late.heard).toEqual(['add ns/a', 'add ns/b']);

    send({ type: 'DELETED', object: object('b', '3') });
    await until(() => late.heard.length === 3);
    expect(late.heard[2]).toBe('delete ns/b');
  });

  it('tells one that was removed nothing more, and the others all', async () => {
    const { client, send } = memoryClient([object('a', '1')]);
    const informer = new Informer({ client, path: '/api/v1/configmaps', resyncPeriodMs: 0 });
    informers.push(informer);
    const gone = recorder();
    const staying = recorder();
    const remove = informer.addHandlers(gone.handlers);
    informer.addHandlers(staying.handlers);
    informer.start();
    await informer.waitForSync();

    remove();
    remove(); // twice is once
    send({ type: 'MODIFIED', object: object('a', '2') });
    await until(() => staying.heard.length === 2);

    expect(gone.heard).toEqual(['add ns/a']);
    expect(staying.heard).toEqual(['add ns/a', 'update ns/a 2']);
  });
});

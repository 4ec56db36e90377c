/**
 * The health gate's shared watches (issue 21, finding 3): one watch per kind and namespace serves
 * every waiter there, keeps in memory only what some waiter follows (a namespace full of
 * unrelated pods costs nothing), seeds a waiter that joins a running watch, wakes only the
 * waiters an event concerns, and closes when the last waiter leaves. Run as the controller
 * identity, bound by the shipped janus-tenant ClusterRole.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { HealthWatch } from '../../../src/controller/health-watch.ts';
import { PatchType } from '../../../src/kube/client.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { silentLogger } from '../../../src/log/index.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import { testNamespace } from '../../support/cluster/saga.ts';
import { availableWith, deployment } from '../../support/cluster/workloads.ts';
import { eventually } from '../../support/eventually.ts';

const clients = useClients();
/** Unrelated pods in the namespace: Pending (no node matches), so cheap for the control plane. */
const NOISE = 150;

let gate: HealthWatch | undefined;
afterEach(async () => {
  await gate?.stop();
  gate = undefined;
});

const web = (ns: string, name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  name,
  namespace: ns,
});

function noisePod(ns: string, i: number): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `noise-${i}`, namespace: ns, labels: { app: `noise-${i % 10}` } },
    spec: {
      nodeSelector: { 'janus.test/none': 'true' },
      containers: [{ name: 'app', image: POD_IMAGES.ready }],
    },
  } as KubeObject;
}

describe('the health gate’s shared watches', () => {
  it('serve every workload of a namespace with one watch per kind, keeping only the objects followed', async () => {
    const ns = await testNamespace(clients.admin, 'hw-shared');
    await clients.admin.create(deployment(ns, 'web-a', POD_IMAGES.ready, { replicas: 1 }));
    await clients.admin.create(deployment(ns, 'web-b', POD_IMAGES.ready, { replicas: 1 }));
    for (let i = 0; i < NOISE; i += 25)
      await Promise.all(Array.from({ length: 25 }, (_, j) => clients.admin.create(noisePod(ns, i + j))));
    await availableWith(clients.admin, ns, 'web-a', POD_IMAGES.ready, 1);
    await availableWith(clients.admin, ns, 'web-b', POD_IMAGES.ready, 1);

    const woken: string[] = [];
    gate = new HealthWatch({
      client: clients.controller.client,
      discovery: clients.controller.discovery,
      wake: (waiter) => woken.push(waiter),
      log: silentLogger(),
    });
    // The first waiter opens the watches (Deployments, ReplicaSets, Pods of the namespace).
    const [a] = await gate.observe('a', [web(ns, 'web-a')], clients.admin);
    expect(a?.polled).toBe(false);
    expect(a?.object?.metadata.name).toBe('web-a');
    expect(a?.related.pods?.map((p) => p.metadata.labels?.app)).toEqual(['web-a']);
    expect(a?.related.replicaSets).toHaveLength(1);
    expect(gate.size).toBe(3);
    // In memory: web-a, its ReplicaSet and its pod; none of the namespace's other pods.
    expect(gate.cached).toBe(3);

    // A second waiter joins the running watches: its objects are listed apart and kept too.
    const [b] = await gate.observe('b', [web(ns, 'web-b')], clients.admin);
    expect(b?.object?.metadata.name).toBe('web-b');
    expect(b?.related.pods?.map((p) => p.metadata.labels?.app)).toEqual(['web-b']);
    expect(b?.related.replicaSets).toHaveLength(1);
    expect(gate.size).toBe(3);
    expect(gate.cached).toBe(6);
    const namespacePods = (await clients.admin.list('v1', 'Pod', ns)).items;
    expect(namespacePods.length).toBe(NOISE + 2);

    // A change to an unrelated pod is dropped; one to web-b's pod wakes b (the unit tests say whom).
    woken.length = 0;
    await clients.admin.patch(
      { apiVersion: 'v1', kind: 'Pod', name: 'noise-0', namespace: ns },
      { metadata: { labels: { touched: 'yes' } } },
      PatchType.merge,
    );
    const [podB] = b?.related.pods ?? [];
    await clients.admin.patch(
      { apiVersion: 'v1', kind: 'Pod', name: podB?.metadata.name ?? '', namespace: ns },
      { metadata: { labels: { touched: 'yes' } } },
      PatchType.merge,
    );
    await eventually(() => expect(woken).toContain('b'));
    expect(gate.cached).toBe(6);

    // b leaves: its objects are forgotten; a leaves: the watches close.
    gate.release('b');
    expect(gate.cached).toBe(3);
    expect(gate.size).toBe(3);
    gate.release('a');
    expect(gate.size).toBe(0);
  });
});

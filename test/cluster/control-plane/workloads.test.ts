/**
 * The test control plane runs workloads: kube-scheduler places pods on two kwok nodes, kwok plays
 * their lifecycle, and a test picks how a pod behaves by its image tag (or a readiness probe on
 * /never-ready), as test/kube-testenv/README.md documents. The health gate's tests rely on each
 * behaviour looking exactly as a kubelet would report it.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import { eventually } from '../../support/eventually.ts';

const clients = useClients();
const ns = useNamespace(clients, 'workloads');

interface Status {
  status?: Record<string, unknown> & {
    conditions?: { type: string; status: string; reason?: string }[];
    containerStatuses?: {
      ready?: boolean;
      restartCount?: number;
      state?: { waiting?: { reason?: string }; running?: unknown };
    }[];
  };
}
type Obj = KubeObject & Status;

const condition = (o: Obj, type: string) => o.status?.conditions?.find((c) => c.type === type);

function podTemplate(app: string, image: string, extra: Record<string, unknown> = {}) {
  return {
    selector: { matchLabels: { app } },
    template: { metadata: { labels: { app } }, spec: { containers: [{ name: 'app', image, ...extra }] } },
  };
}

function deployment(name: string, image: string, spec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns.name },
    spec: { replicas: 2, ...podTemplate(name, image), ...spec },
  } as KubeObject;
}

const get = (apiVersion: string, kind: string, name: string) =>
  clients.admin.get({ apiVersion, kind, name, namespace: ns.name }) as Promise<Obj>;

async function podsOf(app: string): Promise<Obj[]> {
  const list = await clients.admin.list('v1', 'Pod', ns.name, { labelSelector: `app=${app}` });
  return list.items as Obj[];
}

describe('workloads on kwok nodes', () => {
  it('has two Ready nodes without taints', async () => {
    await eventually(
      async () => {
        const nodes = (await clients.admin.list('v1', 'Node')).items as Obj[];
        expect(nodes.map((n) => n.metadata.name).sort()).toEqual(['kwok-node-0', 'kwok-node-1']);
        for (const n of nodes) {
          expect(condition(n, 'Ready')?.status).toBe('True');
          expect((n as { spec?: { taints?: unknown[] } }).spec?.taints ?? []).toEqual([]);
        }
      },
      { timeoutMs: 60_000 },
    );
  });

  it('makes a 2-replica Deployment Available with both pods Running and Ready', async () => {
    await clients.admin.create(deployment('ready', POD_IMAGES.ready));
    await eventually(
      async () => {
        const d = await get('apps/v1', 'Deployment', 'ready');
        expect(d.status?.availableReplicas).toBe(2);
        expect(condition(d, 'Available')?.status).toBe('True');
      },
      { timeoutMs: 60_000 },
    );
    const pods = await podsOf('ready');
    expect(pods.map((p) => [p.status?.phase, condition(p, 'Ready')?.status])).toEqual([
      ['Running', 'True'],
      ['Running', 'True'],
    ]);
  });

  it.each([
    ['an image tagged :never-ready', 'never-ready-image', POD_IMAGES.neverReady, {}],
    [
      'a readiness probe on /never-ready',
      'never-ready-probe',
      POD_IMAGES.ready,
      { readinessProbe: { httpGet: { path: '/never-ready', port: 8080 } } },
    ],
  ])('keeps pods with %s Running but never Ready', async (_, name, image, extra) => {
    await clients.admin.create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace: ns.name },
      spec: { replicas: 1, ...podTemplate(name, image, extra) },
    } as KubeObject);
    await eventually(
      async () => {
        const [pod] = await podsOf(name);
        expect(pod?.status?.phase).toBe('Running');
        expect(condition(pod as Obj, 'Ready')?.status).toBe('False');
        expect(pod?.status?.containerStatuses?.[0]?.state?.running).toBeDefined();
      },
      { timeoutMs: 60_000 },
    );
    await new Promise((r) => setTimeout(r, 2_000)); // and it stays so
    const d = await get('apps/v1', 'Deployment', name);
    expect(d.status?.availableReplicas ?? 0).toBe(0);
  });

  it.each([
    ['crash-loop', POD_IMAGES.crashLoop, 'CrashLoopBackOff'],
    ['image-pull-error', POD_IMAGES.imagePullError, 'ImagePullBackOff'],
  ])('shows a %s pod waiting in %s', async (name, image, reason) => {
    await clients.admin.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: ns.name, labels: { app: name } },
      spec: { containers: [{ name: 'app', image }] },
    } as KubeObject);
    await eventually(
      async () => {
        const pod = await get('v1', 'Pod', name);
        expect(pod.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe(reason);
        expect(condition(pod, 'Ready')?.status).toBe('False');
      },
      { timeoutMs: 60_000 },
    );
  });

  it('makes a flapping pod Ready, then CrashLoopBackOff (restarted) about 10 s later', async () => {
    await clients.admin.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'flapping', namespace: ns.name, labels: { app: 'flapping' } },
      spec: { containers: [{ name: 'app', image: POD_IMAGES.flapping }] },
    } as KubeObject);
    const readyAt = await eventually(
      async () => {
        const pod = await get('v1', 'Pod', 'flapping');
        expect(condition(pod, 'Ready')?.status).toBe('True');
        expect(pod.status?.containerStatuses?.[0]?.restartCount).toBe(0);
        return Date.now();
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    const crashedAt = await eventually(
      async () => {
        const pod = await get('v1', 'Pod', 'flapping');
        expect(pod.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('CrashLoopBackOff');
        expect(pod.status?.containerStatuses?.[0]?.restartCount).toBe(3);
        expect(condition(pod, 'Ready')?.status).toBe('False');
        return Date.now();
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    // The stage's delay: never sooner (a slow machine may make it later).
    expect(crashedAt - readyAt).toBeGreaterThanOrEqual(8_000);
  });

  it('completes a Job, and makes a StatefulSet and a DaemonSet ready', async () => {
    await clients.admin.create({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'migrate', namespace: ns.name },
      spec: {
        template: {
          spec: { restartPolicy: 'Never', containers: [{ name: 'app', image: POD_IMAGES.ready }] },
        },
      },
    } as KubeObject);
    await clients.admin.create({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', namespace: ns.name },
      spec: { replicas: 2, serviceName: 'db', ...podTemplate('db', POD_IMAGES.ready) },
    } as KubeObject);
    await clients.admin.create({
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', namespace: ns.name },
      spec: podTemplate('agent', POD_IMAGES.ready),
    } as KubeObject);
    await eventually(
      async () => {
        expect(condition(await get('batch/v1', 'Job', 'migrate'), 'Complete')?.status).toBe('True');
        expect((await get('apps/v1', 'StatefulSet', 'db')).status?.readyReplicas).toBe(2);
        const ds = await get('apps/v1', 'DaemonSet', 'agent');
        expect(ds.status?.numberReady).toBe(2); // one per node
      },
      { timeoutMs: 90_000 },
    );
  });

  it('keeps the old pods Ready through a rollout that never becomes ready, which ends ProgressDeadlineExceeded', async () => {
    await clients.admin.create(deployment('rollout', POD_IMAGES.ready, { progressDeadlineSeconds: 5 }));
    await eventually(
      async () => expect((await get('apps/v1', 'Deployment', 'rollout')).status?.availableReplicas).toBe(2),
      {
        timeoutMs: 60_000,
      },
    );
    const before = (await podsOf('rollout')).map((p) => p.metadata.name).sort();
    const d = await get('apps/v1', 'Deployment', 'rollout');
    (d.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0] = {
      ...(d.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0],
      image: POD_IMAGES.neverReady,
    };
    await clients.admin.replace(d);
    await eventually(
      async () => {
        const now = await get('apps/v1', 'Deployment', 'rollout');
        const progressing = condition(now, 'Progressing');
        expect(progressing?.status).toBe('False');
        expect(progressing?.reason).toBe('ProgressDeadlineExceeded');
      },
      { timeoutMs: 90_000 },
    );
    const pods = await podsOf('rollout');
    const old = pods.filter((p) => before.includes(p.metadata.name));
    expect(old.map((p) => condition(p, 'Ready')?.status)).toEqual(['True', 'True']);
    expect(
      pods.filter((p) => !before.includes(p.metadata.name)).map((p) => condition(p, 'Ready')?.status),
    ).toEqual(['False']);
  });
});

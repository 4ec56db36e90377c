/** Workloads for tests on the kwok nodes: a Deployment or a StatefulSet, and waiting for it to be ready. */
import { expect } from 'vitest';
import type { KubeObject, Objects } from '../../../src/kube/resources.ts';
import { eventually } from '../eventually.ts';

export interface DeploymentState {
  image: string | undefined;
  available: number;
  updated: number;
  replicas: number;
}

/** A workload `kind` named `name` (pods labelled app=<name>, one container "app") running `image`. */
function podsRunning(
  kind: string,
  namespace: string,
  name: string,
  image: string,
  spec: Record<string, unknown>,
): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind,
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
      ...spec,
    },
  } as KubeObject;
}

/** A Deployment `name` (pods labelled app=<name>, one container "app") running `image`. */
export function deployment(
  namespace: string,
  name: string,
  image: string,
  spec: Record<string, unknown> = {},
): KubeObject {
  return podsRunning('Deployment', namespace, name, image, { replicas: 2, ...spec });
}

export async function deploymentState(
  admin: Objects,
  namespace: string,
  name: string,
): Promise<DeploymentState> {
  return deploymentStateOf(await admin.get({ apiVersion: 'apps/v1', kind: 'Deployment', name, namespace }));
}

/** What a Deployment runs, and how much of it, by its status. */
export function deploymentStateOf(deployment: KubeObject): DeploymentState {
  const d = deployment as KubeObject & {
    spec: { template: { spec: { containers: { image: string }[] } } };
    status?: { availableReplicas?: number; updatedReplicas?: number; replicas?: number };
  };
  return {
    image: d.spec.template.spec.containers[0]?.image,
    available: d.status?.availableReplicas ?? 0,
    updated: d.status?.updatedReplicas ?? 0,
    replicas: d.status?.replicas ?? 0,
  };
}

/** Waits until every replica of the Deployment runs `image` and is available, and no other is left. */
export function availableWith(admin: Objects, namespace: string, name: string, image: string, replicas = 2) {
  return eventually(
    async () => {
      const state = await deploymentState(admin, namespace, name);
      expect(state).toEqual({ image, available: replicas, updated: replicas, replicas });
      return state;
    },
    { timeoutMs: 90_000 },
  );
}

/**
 * A StatefulSet `name` (pods labelled app=<name>, one container "app") running `image`, with the
 * defaults a StatefulSet gets when they are not said: podManagementPolicy OrderedReady and a
 * RollingUpdate without partition.
 */
export function statefulSet(
  namespace: string,
  name: string,
  image: string,
  spec: Record<string, unknown> = {},
): KubeObject {
  return podsRunning('StatefulSet', namespace, name, image, { replicas: 3, serviceName: name, ...spec });
}

export interface StatefulSetPod {
  name: string;
  revision: string | undefined;
  image: string | undefined;
  ready: boolean;
}

/** The StatefulSet's pods (not being deleted), by name: revision hash, image, readiness. */
export async function statefulSetPods(
  admin: Objects,
  namespace: string,
  name: string,
): Promise<StatefulSetPod[]> {
  const pods = await admin.list('v1', 'Pod', namespace, { labelSelector: `app=${name}` });
  return pods.items
    .filter((p) => !p.metadata.deletionTimestamp)
    .map(statefulSetPodOf)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** A StatefulSet's pod: its name, revision hash, image, readiness. */
export function statefulSetPodOf(pod: KubeObject): StatefulSetPod {
  const p = pod as KubeObject & {
    spec?: { containers?: { image?: string }[] };
    status?: { conditions?: { type: string; status: string }[] };
  };
  return {
    name: p.metadata.name,
    revision: p.metadata.labels?.['controller-revision-hash'],
    image: p.spec?.containers?.[0]?.image,
    ready: (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True'),
  };
}

/** Waits until all `replicas` pods of the StatefulSet run `image` and are Ready; returns its revision. */
export function readyWith(admin: Objects, namespace: string, name: string, image: string, replicas = 3) {
  return eventually(
    async () => {
      const pods = await statefulSetPods(admin, namespace, name);
      expect(pods.map((p) => ({ image: p.image, ready: p.ready }))).toEqual(
        Array.from({ length: replicas }, () => ({ image, ready: true })),
      );
      const sts = (await admin.get({
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        name,
        namespace,
      })) as KubeObject & {
        status?: { updateRevision?: string; currentRevision?: string; readyReplicas?: number };
      };
      expect(sts.status?.readyReplicas).toBe(replicas);
      expect(new Set(pods.map((p) => p.revision))).toEqual(new Set([sts.status?.updateRevision]));
      return { revision: sts.status?.updateRevision ?? '', pods };
    },
    { timeoutMs: 120_000 },
  );
}

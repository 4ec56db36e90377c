/** Workloads for tests on the kwok nodes: a Deployment, and waiting for it to be available. */
import { expect } from 'vitest';
import type { KubeObject, Objects } from '../../src/kube/resources.ts';
import { eventually } from './eventually.ts';

export interface DeploymentState {
  image: string | undefined;
  available: number;
  updated: number;
  replicas: number;
}

/** A Deployment `name` (pods labelled app=<name>, one container "app") running `image`. */
export function deployment(
  namespace: string,
  name: string,
  image: string,
  spec: Record<string, unknown> = {},
): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels: { app: name } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
      ...spec,
    },
  } as KubeObject;
}

export async function deploymentState(
  admin: Objects,
  namespace: string,
  name: string,
): Promise<DeploymentState> {
  const d = (await admin.get({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    name,
    namespace,
  })) as KubeObject & {
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

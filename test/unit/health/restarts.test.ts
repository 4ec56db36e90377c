/** Restarts of a target's current-revision containers: what the bake window compares. */
import { describe, expect, it } from 'vitest';
import { restartsOf } from '../../../src/health/index.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';

const NS = 'shop';
const owner = (kind: string, uid: string) => [
  { apiVersion: 'apps/v1', kind, name: 'x', uid, controller: true },
];

function pod(
  name: string,
  ownerUid: string | undefined,
  restarts: number[],
  labels: Record<string, string> = {},
) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NS,
      labels,
      creationTimestamp: '2026-03-01T12:00:00Z',
      ...(ownerUid && { ownerReferences: owner('ReplicaSet', ownerUid) }),
    },
    status: {
      phase: 'Running',
      containerStatuses: restarts.map((restartCount, i) => ({ name: `c${i}`, restartCount })),
    },
  } as KubeObject;
}

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    namespace: NS,
    uid: 'uid-deploy',
    annotations: { 'deployment.kubernetes.io/revision': '2' },
  },
} as KubeObject;
const replicaSet = (uid: string, revision: string) =>
  ({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name: `web-${revision}`,
      namespace: NS,
      uid,
      annotations: { 'deployment.kubernetes.io/revision': revision },
      ownerReferences: owner('Deployment', 'uid-deploy'),
    },
  }) as KubeObject;

describe('restartsOf', () => {
  it("a Deployment's: its new revision's pods only, naming the container that restarted most", () => {
    const related = {
      replicaSets: [replicaSet('uid-rs1', '1'), replicaSet('uid-rs2', '2')],
      pods: [
        pod('web-old', 'uid-rs1', [9]),
        pod('web-new-a', 'uid-rs2', [1, 0]),
        pod('web-new-b', 'uid-rs2', [3]),
        pod('decoy', undefined, [50]),
      ],
    };
    expect(restartsOf(deployment, related)).toEqual({
      total: 4,
      worst: { pod: 'shop/web-new-b', container: 'c0', count: 3 },
    });
  });

  it('a Pod: its own containers; none restarted: a total of 0 and nobody named', () => {
    expect(restartsOf(pod('solo', undefined, [0, 0]))).toEqual({ total: 0 });
  });

  it('a kind without pods of its own: undefined', () => {
    const svc = { apiVersion: 'v1', kind: 'Service', metadata: { name: 's', namespace: NS } } as KubeObject;
    expect(restartsOf(svc)).toBeUndefined();
  });
});

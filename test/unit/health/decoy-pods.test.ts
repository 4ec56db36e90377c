/**
 * Issue 21, finding 5: anyone who may create pods in a namespace can create a bare pod (or
 * ReplicaSet) labelled like a workload's, with its revision hash and an image that cannot be
 * pulled. Such a decoy must neither fail the workload's rollout nor make its rollback
 * "unhealthy": only objects whose controller reference names the workload's uid count.
 */
import { describe, expect, it } from 'vitest';
import { assessHealth } from '../../../src/health/index.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';

const NS = 'team-a';
const pullFails = { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "nope:v0"' } };
const running = { running: { startedAt: '2026-03-01T12:00:05Z' } };
type Controller = { kind: string; name: string; uid?: string };

function object(apiVersion: string, kind: string, name: string, uid: string, rest: object): KubeObject {
  return { apiVersion, kind, metadata: { name, namespace: NS, uid, generation: 2 }, ...rest } as KubeObject;
}

function controlled<T extends KubeObject>(obj: T, controller: Controller | undefined): T {
  if (!controller) return obj;
  const ref = { apiVersion: 'apps/v1', controller: true, uid: '', ...controller };
  return { ...obj, metadata: { ...obj.metadata, ownerReferences: [ref] } };
}

/** A pod in ImagePullBackOff (or running), labelled `labels`, controlled by `controller` if given. */
function pod(
  name: string,
  labels: Record<string, string>,
  controller?: Controller,
  state: object = pullFails,
) {
  const p: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: NS, labels, creationTimestamp: '2026-03-01T12:00:00Z' },
    spec: { containers: [{ name: 'app', image: 'nope:v0' }] },
    status: { phase: 'Pending', containerStatuses: [{ name: 'app', ready: false, state }] },
  } as KubeObject;
  return controlled(p, controller);
}

const sts = object('apps/v1', 'StatefulSet', 'db', 'uid-sts', {
  spec: { replicas: 2, selector: { matchLabels: { app: 'db' } }, updateStrategy: { type: 'RollingUpdate' } },
  status: {
    observedGeneration: 2,
    replicas: 2,
    readyReplicas: 1,
    updatedReplicas: 1,
    currentReplicas: 1,
    currentRevision: 'db-old',
    updateRevision: 'db-new',
  },
});
const stsLabels = { app: 'db', 'controller-revision-hash': 'db-new' };

const deploy = object('apps/v1', 'Deployment', 'web', 'uid-deploy', {
  metadata: {
    name: 'web',
    namespace: NS,
    uid: 'uid-deploy',
    generation: 2,
    annotations: { 'deployment.kubernetes.io/revision': '2' },
  },
  spec: { replicas: 1, selector: { matchLabels: { app: 'web' } } },
  status: { observedGeneration: 2, replicas: 2, updatedReplicas: 1, availableReplicas: 1, readyReplicas: 1 },
});
function replicaSet(name: string, uid: string, hash: string, controller?: Controller): KubeObject {
  const rs = object('apps/v1', 'ReplicaSet', name, uid, {
    spec: { replicas: 1 },
    status: { observedGeneration: 2, replicas: 1, readyReplicas: 0, availableReplicas: 0 },
  });
  rs.metadata.labels = { app: 'web', 'pod-template-hash': hash };
  rs.metadata.annotations = { 'deployment.kubernetes.io/revision': '2' };
  return controlled(rs, controller);
}
const newRs = replicaSet('web-new', 'uid-rs', 'new', { kind: 'Deployment', name: 'web', uid: 'uid-deploy' });
const webLabels = { app: 'web', 'pod-template-hash': 'new' };

const ds = object('apps/v1', 'DaemonSet', 'agent', 'uid-ds', {
  spec: { selector: { matchLabels: { app: 'agent' } } },
  status: {
    observedGeneration: 2,
    desiredNumberScheduled: 2,
    currentNumberScheduled: 2,
    updatedNumberScheduled: 1,
  },
});
const dsLabels = { app: 'agent', 'pod-template-generation': '2' };

const job = object('batch/v1', 'Job', 'migrate', 'uid-job', { spec: {}, status: { active: 1 } });

describe('a decoy pod does not fail someone else’s gate', () => {
  it('StatefulSet: a bare pod with the update revision’s hash is not one of its pods', () => {
    const verdict = assessHealth(sts, { pods: [pod('decoy', stsLabels)] });
    expect(verdict).toMatchObject({ status: 'InProgress', reason: 'ReplicasNotReady' });
  });

  it('StatefulSet: a pod whose controller only has the same kind and name (no uid) does not count', () => {
    const lookalike = pod('decoy', stsLabels, { kind: 'StatefulSet', name: 'db' });
    expect(assessHealth(sts, { pods: [lookalike] }).status).toBe('InProgress');
  });

  it('StatefulSet: its own pod in ImagePullBackOff still fails it', () => {
    const own = pod('db-1', stsLabels, { kind: 'StatefulSet', name: 'db', uid: 'uid-sts' });
    expect(assessHealth(sts, { pods: [pod('decoy', stsLabels, undefined, running), own] })).toMatchObject({
      status: 'Failed',
      reason: 'ImagePullBackOff',
      message: expect.stringContaining(`pod ${NS}/db-1 container app`),
    });
  });

  it('StatefulSet: a pod forging its controller reference by uid counts only under one of its ordinals', () => {
    const forged = (name: string) =>
      pod(name, stsLabels, { kind: 'StatefulSet', name: 'db', uid: 'uid-sts' });
    // Beyond its replicas, or not named like a member at all: someone else's pod, whatever it claims.
    for (const name of ['db-2', 'db-5', 'db-01', 'db-x', 'dbx-0', 'db-1-a', 'other-1']) {
      expect(assessHealth(sts, { pods: [forged(name)] }), name).toMatchObject({
        status: 'InProgress',
        reason: 'ReplicasNotReady',
      });
    }
    // Under an ordinal it has, the pod is what its own controller counts too (see statefulSetMembers).
    expect(assessHealth(sts, { pods: [forged('db-1')] }).status).toBe('Failed');
    // spec.ordinals.start moves the ordinals it has.
    const fromTen = { ...sts, spec: { ...(sts.spec as object), ordinals: { start: 10 } } } as KubeObject;
    expect(assessHealth(fromTen, { pods: [forged('db-1')] }).status).toBe('InProgress');
    expect(assessHealth(fromTen, { pods: [forged('db-11')] }).status).toBe('Failed');
  });

  it('Deployment: a bare pod with the new ReplicaSet’s hash does not count', () => {
    const verdict = assessHealth(deploy, { pods: [pod('decoy', webLabels)], replicaSets: [newRs] });
    expect(verdict.status).toBe('InProgress');
  });

  it('Deployment: without its ReplicaSets no pod can be shown to be its own, so none counts', () => {
    expect(assessHealth(deploy, { pods: [pod('decoy', webLabels)] }).status).toBe('InProgress');
  });

  it('Deployment: a decoy ReplicaSet of its revision, and the decoy’s pods, do not count', () => {
    const decoyRs = replicaSet('web-decoy', 'uid-decoy-rs', 'new');
    const decoyPod = pod('web-decoy-x', webLabels, {
      kind: 'ReplicaSet',
      name: 'web-decoy',
      uid: 'uid-decoy-rs',
    });
    const verdict = assessHealth(deploy, { pods: [decoyPod], replicaSets: [decoyRs, newRs] });
    expect(verdict.status).toBe('InProgress');
  });

  it('Deployment: a pod of its new ReplicaSet in ImagePullBackOff still fails it', () => {
    const own = pod('web-new-a', webLabels, { kind: 'ReplicaSet', name: 'web-new', uid: 'uid-rs' });
    expect(assessHealth(deploy, { pods: [own], replicaSets: [newRs] })).toMatchObject({
      status: 'Failed',
      reason: 'ImagePullBackOff',
    });
    expect(assessHealth(deploy, { pods: [own] }).status).toBe('InProgress');
  });

  it('DaemonSet: a bare pod of its template generation does not count; its own does', () => {
    expect(assessHealth(ds, { pods: [pod('decoy', dsLabels)] }).status).toBe('InProgress');
    const own = pod('agent-a', dsLabels, { kind: 'DaemonSet', name: 'agent', uid: 'uid-ds' });
    expect(assessHealth(ds, { pods: [own] }).status).toBe('Failed');
  });

  it('ReplicaSet: a bare pod with its labels does not count; its own does', () => {
    expect(assessHealth(newRs, { pods: [pod('decoy', webLabels)] }).status).toBe('InProgress');
    const own = pod('web-new-a', webLabels, { kind: 'ReplicaSet', name: 'web-new', uid: 'uid-rs' });
    expect(assessHealth(newRs, { pods: [own] }).status).toBe('Failed');
  });

  it('Job: a bare pod with its labels does not count; its own does', () => {
    const labels = { 'batch.kubernetes.io/job-name': 'migrate' };
    expect(assessHealth(job, { pods: [pod('decoy', labels)] }).status).toBe('InProgress');
    const own = pod('migrate-a', labels, { kind: 'Job', name: 'migrate', uid: 'uid-job' });
    expect(assessHealth(job, { pods: [own] }).status).toBe('Failed');
  });
});

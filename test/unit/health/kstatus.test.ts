import { describe, expect, it } from 'vitest';
import { assessHealth, hasHealthRule } from '../../../src/health/index.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';

const REVISION = 'deployment.kubernetes.io/revision';
const DEPLOYMENT_UID = '5f0c7a3e-1111-4c1e-9d7e-000000000001';
const OLD_RS_UID = '5f0c7a3e-2222-4c1e-9d7e-000000000002';
const NEW_RS_UID = '5f0c7a3e-3333-4c1e-9d7e-000000000003';

const condition = (type: string, status: string, reason: string, message = '') => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: '2026-03-01T12:00:00Z',
});

/** shop/web, 2 replicas, revision 2 (image web:v2) rolling out over revision 1 (web:v1). */
function deployment(status: Record<string, unknown>, meta: Partial<KubeObject['metadata']> = {}): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: 'shop',
      uid: DEPLOYMENT_UID,
      generation: 2,
      annotations: { [REVISION]: '2' },
      ...meta,
    },
    spec: {
      replicas: 2,
      progressDeadlineSeconds: 600,
      selector: { matchLabels: { app: 'web' } },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      template: {
        metadata: { labels: { app: 'web' } },
        spec: { containers: [{ name: 'app', image: 'registry.example/web:v2' }] },
      },
    },
    status: { observedGeneration: 2, ...status },
  };
}

const midRollout = {
  replicas: 3,
  updatedReplicas: 2,
  readyReplicas: 2,
  availableReplicas: 1,
  unavailableReplicas: 1,
  conditions: [
    condition('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'),
    condition('Progressing', 'True', 'ReplicaSetUpdated', 'ReplicaSet "web-7d9c5b8f6d" is progressing.'),
  ],
};

const complete = {
  replicas: 2,
  updatedReplicas: 2,
  readyReplicas: 2,
  availableReplicas: 2,
  conditions: [
    condition('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.'),
    condition(
      'Progressing',
      'True',
      'NewReplicaSetAvailable',
      'ReplicaSet "web-7d9c5b8f6d" has successfully progressed.',
    ),
  ],
};

function replicaSet(name: string, uid: string, revision: string, hash: string): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name,
      namespace: 'shop',
      uid,
      generation: 1,
      labels: { app: 'web', 'pod-template-hash': hash },
      annotations: { [REVISION]: revision },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: DEPLOYMENT_UID, controller: true },
      ],
    },
    spec: { replicas: 1 },
    status: { observedGeneration: 1, replicas: 1, readyReplicas: 1, availableReplicas: 1 },
  };
}
const oldReplicaSet = replicaSet('web-5f6b9c7d48', OLD_RS_UID, '1', '5f6b9c7d48');
const newReplicaSet = replicaSet('web-7d9c5b8f6d', NEW_RS_UID, '2', '7d9c5b8f6d');

type ContainerState = Record<string, unknown>;
const running: ContainerState = { running: { startedAt: '2026-03-01T12:00:05Z' } };
const crashLooping: ContainerState = {
  waiting: {
    reason: 'CrashLoopBackOff',
    message: 'back-off 40s restarting failed container=app pod=web-7d9c5b8f6d-x2k4q',
  },
};
const imagePullBackOff: ContainerState = {
  waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "registry.example/web:v9"' },
};

function pod(
  name: string,
  state: ContainerState,
  opts: {
    owner?: { kind: string; name: string; uid: string };
    labels?: Record<string, string>;
    phase?: string;
    ready?: boolean;
    created?: string;
  } = {},
): KubeObject {
  const ready = opts.ready ?? 'running' in state;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'shop',
      creationTimestamp: opts.created ?? '2026-03-01T12:00:00Z',
      labels: opts.labels ?? {},
      ...(opts.owner && { ownerReferences: [{ apiVersion: 'apps/v1', controller: true, ...opts.owner }] }),
    },
    spec: { containers: [{ name: 'app', image: 'registry.example/web:v2' }] },
    status: {
      phase: opts.phase ?? 'Running',
      conditions: [
        condition('PodScheduled', 'True', ''),
        condition(
          'Ready',
          ready ? 'True' : 'False',
          ready ? '' : 'ContainersNotReady',
          ready ? '' : 'containers with unready status: [app]',
        ),
      ],
      containerStatuses: [{ name: 'app', ready, restartCount: 'waiting' in state ? 3 : 0, state }],
    },
  };
}

const oldPod = (state: ContainerState) =>
  pod('web-5f6b9c7d48-abcde', state, {
    owner: { kind: 'ReplicaSet', name: 'web-5f6b9c7d48', uid: OLD_RS_UID },
    labels: { app: 'web', 'pod-template-hash': '5f6b9c7d48' },
    created: '2026-03-01T11:00:00Z',
  });
const newPod = (state: ContainerState, name = 'web-7d9c5b8f6d-x2k4q') =>
  pod(name, state, {
    owner: { kind: 'ReplicaSet', name: 'web-7d9c5b8f6d', uid: NEW_RS_UID },
    labels: { app: 'web', 'pod-template-hash': '7d9c5b8f6d' },
    created: '2026-03-01T12:00:00Z',
  });

describe('assessHealth: Deployment', () => {
  it('mid-rollout is InProgress and says which updated replicas are not available', () => {
    expect(assessHealth(deployment(midRollout))).toEqual({
      status: 'InProgress',
      reason: 'UpdatedReplicasNotAvailable',
      message: 'Deployment shop/web: 1 of 2 updated replicas available',
    });
  });

  it('with fewer updated replicas than wanted is InProgress', () => {
    const d = deployment({ ...midRollout, updatedReplicas: 1, availableReplicas: 2 });
    expect(assessHealth(d)).toMatchObject({ status: 'InProgress', reason: 'UpdatedReplicasPending' });
    expect(assessHealth(d).message).toBe('Deployment shop/web: 1 of 2 replicas updated');
  });

  it('with an old replica still running is InProgress', () => {
    const d = deployment({ ...complete, replicas: 3 });
    expect(assessHealth(d)).toEqual({
      status: 'InProgress',
      reason: 'OldReplicasPendingTermination',
      message: 'Deployment shop/web: 1 old replicas pending termination',
    });
  });

  it('complete (NewReplicaSetAvailable, Available) is Current', () => {
    expect(assessHealth(deployment(complete))).toEqual({
      status: 'Current',
      reason: 'RolloutComplete',
      message: 'Deployment shop/web: 2 of 2 replicas updated and available',
    });
  });

  it('with all counters met but Progressing not yet NewReplicaSetAvailable is InProgress', () => {
    const d = deployment({ ...complete, conditions: [complete.conditions[0], midRollout.conditions[1]] });
    expect(assessHealth(d)).toMatchObject({ status: 'InProgress', reason: 'NewReplicaSetNotAvailable' });
  });

  it('with all counters met but Available=False is InProgress', () => {
    const d = deployment({
      ...complete,
      conditions: [
        condition(
          'Available',
          'False',
          'MinimumReplicasUnavailable',
          'Deployment does not have minimum availability.',
        ),
        complete.conditions[1],
      ],
    });
    expect(assessHealth(d)).toMatchObject({ status: 'InProgress', reason: 'DeploymentNotAvailable' });
  });

  it('ProgressDeadlineExceeded is Failed, with the controller message', () => {
    const d = deployment({
      ...midRollout,
      conditions: [
        midRollout.conditions[0],
        condition(
          'Progressing',
          'False',
          'ProgressDeadlineExceeded',
          'ReplicaSet "web-7d9c5b8f6d" has timed out progressing.',
        ),
      ],
    });
    expect(assessHealth(d)).toEqual({
      status: 'Failed',
      reason: 'ProgressDeadlineExceeded',
      message:
        'Deployment shop/web: rollout made no progress within 600s (ReplicaSet "web-7d9c5b8f6d" has timed out progressing.)',
    });
  });

  it('with a crash-looping pod of the new ReplicaSet is Failed, naming the pod and container', () => {
    const pods = [oldPod(running), newPod(running, 'web-7d9c5b8f6d-p9z7m'), newPod(crashLooping)];
    const verdict = assessHealth(deployment(midRollout), {
      pods,
      replicaSets: [oldReplicaSet, newReplicaSet],
    });
    expect(verdict).toEqual({
      status: 'Failed',
      reason: 'CrashLoopBackOff',
      message:
        'Deployment shop/web: pod shop/web-7d9c5b8f6d-x2k4q container app is in CrashLoopBackOff ' +
        '(back-off 40s restarting failed container=app pod=web-7d9c5b8f6d-x2k4q)',
    });
  });

  it('finds the new revision by pod-template-hash age when no ReplicaSet has its revision yet', () => {
    const verdict = assessHealth(deployment(midRollout, { annotations: { [REVISION]: '3' } }), {
      pods: [oldPod(running), newPod(imagePullBackOff)],
      replicaSets: [oldReplicaSet, newReplicaSet],
    });
    expect(verdict).toMatchObject({ status: 'Failed', reason: 'ImagePullBackOff' });
    expect(verdict.message).toContain('pod shop/web-7d9c5b8f6d-x2k4q container app');
  });

  it('ignores a crash-looping pod of the old ReplicaSet', () => {
    const pods = [oldPod(crashLooping), newPod(running)];
    expect(
      assessHealth(deployment(midRollout), { pods, replicaSets: [oldReplicaSet, newReplicaSet] }),
    ).toMatchObject({
      status: 'InProgress',
      reason: 'UpdatedReplicasNotAvailable',
    });
  });

  it('stays Current when complete, whatever a leftover pod shows', () => {
    const pods = [newPod(crashLooping)];
    expect(assessHealth(deployment(complete), { pods, replicaSets: [newReplicaSet] }).status).toBe('Current');
  });

  it('whose new generation is not observed yet is InProgress, before any counter', () => {
    const d = deployment(complete, { generation: 3 });
    expect(assessHealth(d)).toEqual({
      status: 'InProgress',
      reason: 'LatestGenerationNotObserved',
      message: 'Deployment shop/web: generation 3 not yet observed by its controller (observed 2)',
    });
  });

  it('just created, with no status yet, is InProgress', () => {
    const d: KubeObject = { ...deployment({}), status: {} };
    expect(assessHealth(d)).toMatchObject({ status: 'InProgress', reason: 'LatestGenerationNotObserved' });
  });

  it('being deleted is InProgress (Terminating)', () => {
    const d = deployment(complete, { deletionTimestamp: '2026-03-01T12:05:00Z' });
    expect(assessHealth(d)).toMatchObject({ status: 'InProgress', reason: 'Terminating' });
  });
});

const STS_UID = '5f0c7a3e-4444-4c1e-9d7e-000000000004';
function statefulSet(spec: Record<string, unknown>, status: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: 'shop', uid: STS_UID, generation: 4 },
    spec: { replicas: 3, serviceName: 'db', selector: { matchLabels: { app: 'db' } }, ...spec },
    status: { observedGeneration: 4, ...status },
  };
}
const stsRolling = {
  replicas: 3,
  readyReplicas: 3,
  currentReplicas: 2,
  updatedReplicas: 1,
  currentRevision: 'db-6c8d7f9b5',
  updateRevision: 'db-7b4f8c6d9',
};
const stsComplete = {
  replicas: 3,
  readyReplicas: 3,
  availableReplicas: 3,
  currentReplicas: 3,
  updatedReplicas: 3,
  currentRevision: 'db-7b4f8c6d9',
  updateRevision: 'db-7b4f8c6d9',
};
const dbPod = (name: string, revision: string, state: ContainerState) =>
  pod(name, state, {
    owner: { kind: 'StatefulSet', name: 'db', uid: STS_UID },
    labels: { app: 'db', 'controller-revision-hash': revision },
  });

describe('assessHealth: StatefulSet', () => {
  const rollingUpdate = { updateStrategy: { type: 'RollingUpdate' } };

  it('rolling is InProgress, counting updated replicas', () => {
    expect(assessHealth(statefulSet(rollingUpdate, stsRolling))).toEqual({
      status: 'InProgress',
      reason: 'UpdatedReplicasPending',
      message: 'StatefulSet shop/db: 1 of 3 replicas updated',
    });
  });

  it('with an unready replica is InProgress', () => {
    expect(assessHealth(statefulSet(rollingUpdate, { ...stsComplete, readyReplicas: 2 }))).toMatchObject({
      status: 'InProgress',
      reason: 'ReplicasNotReady',
    });
  });

  it('complete (update revision is current) is Current', () => {
    expect(assessHealth(statefulSet(rollingUpdate, stsComplete))).toMatchObject({
      status: 'Current',
      reason: 'RolloutComplete',
    });
  });

  it('with every replica updated but the revisions not yet swapped is InProgress', () => {
    const status = { ...stsComplete, currentRevision: 'db-6c8d7f9b5' };
    expect(assessHealth(statefulSet(rollingUpdate, status))).toMatchObject({
      status: 'InProgress',
      reason: 'RevisionNotCurrent',
    });
  });

  it('with OnDelete is Current once its replicas are ready, old revision or not', () => {
    const onDelete = { updateStrategy: { type: 'OnDelete' } };
    expect(assessHealth(statefulSet(onDelete, stsRolling))).toMatchObject({
      status: 'Current',
      reason: 'OnDeleteStrategy',
    });
    expect(assessHealth(statefulSet(onDelete, { ...stsRolling, readyReplicas: 1 })).status).toBe(
      'InProgress',
    );
  });

  it('with a partition is Current once the replicas above it are updated', () => {
    const partitioned = { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } };
    expect(assessHealth(statefulSet(partitioned, stsRolling))).toMatchObject({
      status: 'Current',
      reason: 'PartitionRolloutComplete',
    });
    expect(assessHealth(statefulSet(partitioned, { ...stsRolling, updatedReplicas: 0 }))).toMatchObject({
      status: 'InProgress',
      reason: 'UpdatedReplicasPending',
      message: 'StatefulSet shop/db: 0 of 1 replicas above partition 2 updated',
    });
  });

  it('with a pod of the update revision failing to pull its image is Failed; an old one is ignored', () => {
    const failingNew = [
      dbPod('db-0', 'db-6c8d7f9b5', running),
      dbPod('db-2', 'db-7b4f8c6d9', imagePullBackOff),
    ];
    expect(assessHealth(statefulSet(rollingUpdate, stsRolling), { pods: failingNew })).toMatchObject({
      status: 'Failed',
      reason: 'ImagePullBackOff',
      message: expect.stringContaining('pod shop/db-2 container app is in ImagePullBackOff'),
    });
    const failingOld = [dbPod('db-0', 'db-6c8d7f9b5', crashLooping), dbPod('db-2', 'db-7b4f8c6d9', running)];
    expect(assessHealth(statefulSet(rollingUpdate, stsRolling), { pods: failingOld }).status).toBe(
      'InProgress',
    );
  });
});

const DS_UID = '5f0c7a3e-5555-4c1e-9d7e-000000000005';
function daemonSet(status: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name: 'node-agent', namespace: 'kube-system', uid: DS_UID, generation: 5 },
    spec: { selector: { matchLabels: { app: 'node-agent' } }, updateStrategy: { type: 'RollingUpdate' } },
    status: {
      observedGeneration: 5,
      desiredNumberScheduled: 3,
      currentNumberScheduled: 3,
      numberMisscheduled: 0,
      ...status,
    },
  };
}

describe('assessHealth: DaemonSet', () => {
  it('mid-update is InProgress', () => {
    const ds = daemonSet({ updatedNumberScheduled: 1, numberAvailable: 3, numberReady: 3 });
    expect(assessHealth(ds)).toEqual({
      status: 'InProgress',
      reason: 'UpdatedPodsPending',
      message: 'DaemonSet kube-system/node-agent: 1 of 3 pods updated',
    });
  });

  it('with an updated pod not available is InProgress', () => {
    const ds = daemonSet({ updatedNumberScheduled: 3, numberAvailable: 2, numberReady: 2 });
    expect(assessHealth(ds)).toMatchObject({ status: 'InProgress', reason: 'PodsNotAvailable' });
  });

  it('with every pod updated and available is Current', () => {
    const ds = daemonSet({ updatedNumberScheduled: 3, numberAvailable: 3, numberReady: 3 });
    expect(assessHealth(ds)).toMatchObject({ status: 'Current', reason: 'RolloutComplete' });
  });

  it('with a crash-looping pod of the current template generation is Failed', () => {
    const ds = daemonSet({ updatedNumberScheduled: 3, numberAvailable: 2, numberReady: 2 });
    const agent = pod('node-agent-q8w2r', crashLooping, {
      owner: { kind: 'DaemonSet', name: 'node-agent', uid: DS_UID },
      labels: { app: 'node-agent', 'pod-template-generation': '5' },
    });
    expect(assessHealth(ds, { pods: [agent] })).toMatchObject({
      status: 'Failed',
      reason: 'CrashLoopBackOff',
    });
    const oldAgent = {
      ...agent,
      metadata: { ...agent.metadata, labels: { 'pod-template-generation': '4' } },
    };
    expect(assessHealth(ds, { pods: [oldAgent] }).status).toBe('InProgress');
  });
});

describe('assessHealth: ReplicaSet', () => {
  it('with all replicas available is Current, and with fewer ready is InProgress', () => {
    const rs = { ...newReplicaSet, spec: { replicas: 2 } };
    expect(
      assessHealth({
        ...rs,
        status: { observedGeneration: 1, replicas: 2, readyReplicas: 2, availableReplicas: 2 },
      }),
    ).toMatchObject({ status: 'Current', reason: 'ReplicasAvailable' });
    expect(
      assessHealth({
        ...rs,
        status: { observedGeneration: 1, replicas: 2, readyReplicas: 1, availableReplicas: 1 },
      }),
    ).toMatchObject({
      status: 'InProgress',
      reason: 'ReplicasNotReady',
      message: 'ReplicaSet shop/web-7d9c5b8f6d: 1 of 2 replicas ready',
    });
  });
});

function job(status: Record<string, unknown>): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: 'migrate',
      namespace: 'shop',
      uid: '5f0c7a3e-6666-4c1e-9d7e-000000000006',
      generation: 1,
    },
    spec: {
      backoffLimit: 2,
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'migrate', image: 'migrate:v2' }] } },
    },
    status,
  };
}

describe('assessHealth: Job', () => {
  it('complete is Current', () => {
    const j = job({
      succeeded: 1,
      conditions: [
        condition('SuccessCriteriaMet', 'True', 'CompletionsReached'),
        condition('Complete', 'True', 'CompletionsReached'),
      ],
    });
    expect(assessHealth(j)).toEqual({
      status: 'Current',
      reason: 'JobComplete',
      message: 'Job shop/migrate: completed, 1 pods succeeded',
    });
  });

  it('failed is Failed with the Job controller reason', () => {
    const j = job({
      failed: 3,
      conditions: [
        condition(
          'FailureTarget',
          'True',
          'BackoffLimitExceeded',
          'Job has reached the specified backoff limit',
        ),
        condition('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'),
      ],
    });
    expect(assessHealth(j)).toEqual({
      status: 'Failed',
      reason: 'BackoffLimitExceeded',
      message: 'Job shop/migrate: failed (Job has reached the specified backoff limit)',
    });
  });

  it('running is InProgress with its pod counts', () => {
    expect(assessHealth(job({ active: 1, failed: 1 }))).toEqual({
      status: 'InProgress',
      reason: 'JobRunning',
      message: 'Job shop/migrate: running: 1 active, 0 succeeded, 1 failed pods',
    });
  });
});

describe('assessHealth: Pod', () => {
  const standalone = (state: ContainerState, opts: Parameters<typeof pod>[2] = {}) =>
    pod('debug', state, opts);

  it('running and ready is Current', () => {
    expect(assessHealth(standalone(running))).toMatchObject({ status: 'Current', reason: 'PodReady' });
  });

  it('running but not ready is InProgress, naming the unready container', () => {
    expect(assessHealth(standalone(running, { ready: false }))).toEqual({
      status: 'InProgress',
      reason: 'PodNotReady',
      message: 'Pod shop/debug: Running, not ready: app',
    });
  });

  it('succeeded is Current, failed is Failed', () => {
    expect(
      assessHealth(standalone({ terminated: { exitCode: 0 } }, { phase: 'Succeeded', ready: false })).status,
    ).toBe('Current');
    expect(
      assessHealth(standalone({ terminated: { exitCode: 1 } }, { phase: 'Failed', ready: false })),
    ).toMatchObject({
      status: 'Failed',
      reason: 'PodFailed',
    });
  });

  it.each([
    ['CrashLoopBackOff', 'Running'],
    ['ImagePullBackOff', 'Pending'],
    ['ErrImagePull', 'Pending'],
    ['CreateContainerConfigError', 'Pending'],
    ['InvalidImageName', 'Pending'],
  ])('with a container waiting in %s is Failed, naming the container', (reason, phase) => {
    expect(assessHealth(standalone({ waiting: { reason } }, { phase }))).toEqual({
      status: 'Failed',
      reason,
      message: `Pod shop/debug: container app is in ${reason}`,
    });
  });

  it('still creating its container is InProgress', () => {
    expect(
      assessHealth(standalone({ waiting: { reason: 'ContainerCreating' } }, { phase: 'Pending' })),
    ).toEqual({
      status: 'InProgress',
      reason: 'PodNotReady',
      message: 'Pod shop/debug: Pending, not ready: app (ContainerCreating)',
    });
  });
});

describe('assessHealth: PersistentVolumeClaim and Service', () => {
  const pvc = (phase: string): KubeObject => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data', namespace: 'shop' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    status: { phase },
  });
  const service = (type: string, status: Record<string, unknown> = {}): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'shop' },
    spec: { type, selector: { app: 'web' }, ports: [{ port: 80 }] },
    status,
  });

  it('a claim is Current when Bound, InProgress when Pending, Failed when Lost', () => {
    expect(assessHealth(pvc('Bound')).status).toBe('Current');
    expect(assessHealth(pvc('Pending'))).toMatchObject({
      status: 'InProgress',
      message: 'PersistentVolumeClaim shop/data: not bound (phase Pending)',
    });
    expect(assessHealth(pvc('Lost')).status).toBe('Failed');
  });

  it('a LoadBalancer Service waits for an ingress address; a ClusterIP Service does not', () => {
    expect(assessHealth(service('LoadBalancer', { loadBalancer: {} }))).toMatchObject({
      status: 'InProgress',
      reason: 'LoadBalancerPending',
    });
    expect(
      assessHealth(service('LoadBalancer', { loadBalancer: { ingress: [{ ip: '203.0.113.10' }] } })).status,
    ).toBe('Current');
    expect(assessHealth(service('ClusterIP')).status).toBe('Current');
  });
});

describe('assessHealth: kinds without a rule (generic conditions)', () => {
  const kustomization = (conditions: unknown[], generation = 7, observedGeneration = 7): KubeObject => ({
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name: 'apps', namespace: 'flux-system', generation },
    spec: { interval: '10m', path: './apps', sourceRef: { kind: 'GitRepository', name: 'flux-system' } },
    status: { observedGeneration, conditions },
  });

  it('Ready=True is Current', () => {
    expect(
      assessHealth(
        kustomization([
          condition('Ready', 'True', 'ReconciliationSucceeded', 'Applied revision: main@sha1:4f2a'),
        ]),
      ),
    ).toMatchObject({ status: 'Current', reason: 'ReconciliationSucceeded' });
  });

  it('Ready=False is InProgress with the condition reason and message', () => {
    expect(
      assessHealth(
        kustomization([
          condition('Ready', 'False', 'DependencyNotReady', 'dependency flux-system/infra is not ready'),
        ]),
      ),
    ).toEqual({
      status: 'InProgress',
      reason: 'DependencyNotReady',
      message:
        'Kustomization flux-system/apps: not ready, Ready=False (dependency flux-system/infra is not ready)',
    });
  });

  it('Reconciling=True is InProgress even though Ready is still True from the last run', () => {
    const k = kustomization([
      condition('Reconciling', 'True', 'Progressing', 'reconciliation in progress'),
      condition('Ready', 'True', 'ReconciliationSucceeded'),
    ]);
    expect(assessHealth(k)).toMatchObject({ status: 'InProgress', reason: 'Progressing' });
  });

  it('Stalled=True is Failed, even while Reconciling', () => {
    const k = kustomization([
      condition('Reconciling', 'True', 'Progressing'),
      condition('Stalled', 'True', 'BuildFailed', 'kustomize build failed: accumulating resources'),
      condition('Ready', 'False', 'BuildFailed'),
    ]);
    expect(assessHealth(k)).toEqual({
      status: 'Failed',
      reason: 'BuildFailed',
      message: 'Kustomization flux-system/apps: stalled (kustomize build failed: accumulating resources)',
    });
  });

  it('an observedGeneration behind metadata.generation is InProgress, whatever Ready says', () => {
    const k = kustomization([condition('Ready', 'True', 'ReconciliationSucceeded')], 8, 7);
    expect(assessHealth(k)).toMatchObject({ status: 'InProgress', reason: 'LatestGenerationNotObserved' });
  });

  it('an object with no conditions at all is Current', () => {
    const cm: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'web-config', namespace: 'shop' },
      data: { a: '1' },
    };
    expect(assessHealth(cm)).toMatchObject({ status: 'Current', reason: 'NoHealthRule' });
  });
});

describe('hasHealthRule', () => {
  it.each([
    ['apps/v1', 'Deployment'],
    ['apps/v1', 'StatefulSet'],
    ['apps/v1', 'DaemonSet'],
    ['apps/v1', 'ReplicaSet'],
    ['batch/v1', 'Job'],
    ['v1', 'Pod'],
    ['v1', 'PersistentVolumeClaim'],
    ['v1', 'Service'],
  ])('%s %s has a rule', (apiVersion, kind) => {
    expect(hasHealthRule(apiVersion, kind)).toBe(true);
  });

  it.each([
    ['v1', 'ConfigMap'],
    ['batch/v1', 'CronJob'],
    ['kustomize.toolkit.fluxcd.io/v1', 'Kustomization'],
    ['example.com/v1', 'Deployment'],
  ])('%s %s has none', (apiVersion, kind) => {
    expect(hasHealthRule(apiVersion, kind)).toBe(false);
  });
});

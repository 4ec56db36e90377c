/**
 * Issue 23, rollbacks that finish: which pods a rollback deletes so that a StatefulSet's
 * controller can finish it (Kubernetes' "forced rollback"), and when a human must act instead.
 */
import { describe, expect, it } from 'vitest';
import { deletionRefused, forcedRollback } from '../../../src/health/forced-rollback.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';

const NS = 'shop';
const crashLoop = { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting' } };
const running = { running: { startedAt: '2026-03-01T12:00:05Z' } };

/** The set after the rollback restored its template: generation 3, revision db-good again. */
function sts(overrides: { observedGeneration?: number; updateRevision?: string; strategy?: object } = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name: 'db', namespace: NS, uid: 'uid-db', generation: 3 },
    spec: { replicas: 3, updateStrategy: overrides.strategy ?? { type: 'RollingUpdate' } },
    status: {
      observedGeneration: overrides.observedGeneration ?? 3,
      replicas: 3,
      readyReplicas: 2,
      currentRevision: 'db-good',
      updateRevision: overrides.updateRevision ?? 'db-good',
    },
  } as KubeObject;
}

function pod(
  name: string,
  labels: Record<string, string>,
  opts: { owner?: string; ready?: boolean; deleting?: boolean } = {},
): KubeObject {
  const ready = opts.ready ?? false;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${name}`,
      labels,
      ...(opts.deleting && { deletionTimestamp: '2026-03-01T12:01:00Z' }),
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'X', name: 'x', controller: true, uid: opts.owner ?? 'uid-db' },
      ],
    },
    status: {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      containerStatuses: [{ name: 'app', ready, state: ready ? running : crashLoop }],
    },
  } as KubeObject;
}
const of = (revision: string) => ({ app: 'db', 'controller-revision-hash': revision });
const names = (step: ReturnType<typeof forcedRollback>) =>
  step.kind === 'delete' ? step.pods.map((s) => `${s.pod.metadata.name} ${s.why}`) : step.kind;

describe('forced rollback of a StatefulSet', () => {
  const good0 = pod('db-0', of('db-good'), { ready: true });
  const good1 = pod('db-1', of('db-good'), { ready: true });
  const bad2 = pod('db-2', of('db-bad'));

  it('deletes the stuck pod of the revision the change rolled out, and only that one', () => {
    const step = forcedRollback(sts(), [good0, good1, bad2], 'db-bad');
    expect(names(step)).toEqual(['db-2 CrashLoopBackOff']);
    expect(step).toMatchObject({ kind: 'delete', revision: 'db-bad' });
  });

  it('deletes a pod of that revision that is merely not Ready (it would block OrderedReady as well)', () => {
    const notReady = pod('db-2', of('db-bad'));
    const status = notReady.status as { containerStatuses: { state: object }[] };
    status.containerStatuses = [{ ...status.containerStatuses[0], state: running }];
    expect(names(forcedRollback(sts(), [good0, notReady], 'db-bad'))).toEqual(['db-2 PodNotReady']);
  });

  it('leaves a Ready pod of that revision to the controller, which replaces it itself', () => {
    const readyBad = pod('db-2', of('db-bad'), { ready: true });
    expect(forcedRollback(sts(), [good0, readyBad], 'db-bad')).toEqual({ kind: 'none' });
  });

  it('never deletes a pod of another revision, even a stuck one: it is not this change’s', () => {
    const restoredStuck = pod('db-1', of('db-good'));
    expect(forcedRollback(sts(), [good0, restoredStuck], 'db-bad')).toEqual({ kind: 'none' });
    const older = pod('db-2', of('db-older'));
    const step = forcedRollback(sts(), [good0, older], 'db-bad');
    expect(step.kind).toBe('human');
  });

  it('a stuck pod of a revision it cannot call its own: fails at once unless the controller replaces it', () => {
    const unknown = pod('db-2', of('db-other'));
    expect(forcedRollback(sts(), [good0, good1, unknown], undefined)).toEqual({
      kind: 'human',
      failure: {
        status: 'Failed',
        reason: 'ForcedRollbackNeeded',
        message:
          'StatefulSet shop/db: pod shop/db-2 (CrashLoopBackOff) of a revision this transaction did not record as its own cannot start, and OrderedReady waits for them: delete them (kubectl delete pod -n shop db-2)',
      },
    });
    // Parallel: the controller replaces it by itself, so the check waits.
    const parallel = sts();
    (parallel.spec as Record<string, unknown>).podManagementPolicy = 'Parallel';
    expect(forcedRollback(parallel, [good0, good1, unknown], undefined)).toEqual({ kind: 'none' });
    // A pod of the current revision is the set's own business (below a partition, say).
    const current = sts({ updateRevision: 'db-good2' });
    expect(forcedRollback(current, [pod('db-0', of('db-good'))], undefined)).toEqual({ kind: 'none' });
  });

  it('never deletes a pod the set does not control (a look-alike, or another owner’s)', () => {
    const bare = { ...bad2, metadata: { ...bad2.metadata, ownerReferences: [] } } as KubeObject;
    const foreign = pod('db-9', of('db-bad'), { owner: 'uid-other' });
    expect(forcedRollback(sts(), [bare, foreign], 'db-bad')).toEqual({ kind: 'none' });
  });

  it('skips a pod already being deleted (a restart looks again without deleting twice)', () => {
    expect(forcedRollback(sts(), [pod('db-2', of('db-bad'), { deleting: true })], 'db-bad')).toEqual({
      kind: 'none',
    });
  });

  it('waits while the controller has not seen the restored template (its revision may still be the bad one)', () => {
    expect(forcedRollback(sts({ observedGeneration: 2 }), [bad2], 'db-bad')).toEqual({ kind: 'none' });
    expect(forcedRollback(sts({ updateRevision: 'db-bad' }), [bad2], 'db-bad')).toEqual({ kind: 'none' });
  });

  it('deletes nothing without a recorded revision: it cannot tell which pods the change made', () => {
    expect(forcedRollback(sts(), [bad2], undefined).kind).toBe('human');
  });

  it('deletes the same way with a partition or OnDelete (the recreated pod takes the restored template)', () => {
    for (const strategy of [
      { type: 'OnDelete' },
      { type: 'RollingUpdate', rollingUpdate: { partition: 1 } },
    ]) {
      expect(names(forcedRollback(sts({ strategy }), [good0, bad2], 'db-bad'))).toEqual([
        'db-2 CrashLoopBackOff',
      ]);
    }
  });

  it('leaves a Parallel set’s pods to its controller, which replaces them itself at or above the partition', () => {
    const parallel = (strategy: object) => {
      const set = sts({ strategy });
      (set.spec as Record<string, unknown>).podManagementPolicy = 'Parallel';
      return set;
    };
    expect(forcedRollback(parallel({ type: 'RollingUpdate' }), [good0, bad2], 'db-bad')).toEqual({
      kind: 'none',
    });
    const partitioned = parallel({ type: 'RollingUpdate', rollingUpdate: { partition: 2 } });
    expect(forcedRollback(partitioned, [good0, bad2], 'db-bad')).toEqual({ kind: 'none' });
    // Below the partition, or with OnDelete, it never would.
    const above = parallel({ type: 'RollingUpdate', rollingUpdate: { partition: 3 } });
    expect(names(forcedRollback(above, [good0, bad2], 'db-bad'))).toEqual(['db-2 CrashLoopBackOff']);
    expect(names(forcedRollback(parallel({ type: 'OnDelete' }), [good0, bad2], 'db-bad'))).toEqual([
      'db-2 CrashLoopBackOff',
    ]);
  });

  it('says what a human must do when the ServiceAccount may not delete pods', () => {
    const step = forcedRollback(sts(), [good0, bad2], 'db-bad');
    if (step.kind !== 'delete') throw new Error(step.kind);
    expect(deletionRefused(sts(), step, 'shop/deployer', 'pods "db-2" is forbidden')).toEqual({
      status: 'Failed',
      reason: 'ForcedRollbackRefused',
      message:
        'StatefulSet shop/db: pod shop/db-2 (CrashLoopBackOff) of revision db-bad will not be replaced by its controller (forced rollback); ServiceAccount shop/deployer may not delete pods (pods "db-2" is forbidden): grant it delete on pods in shop, or delete them by hand (kubectl delete pod -n shop db-2)',
    });
  });
});

describe('rollbacks of other workloads', () => {
  function daemonSet(type: string): KubeObject {
    return {
      apiVersion: 'apps/v1',
      kind: 'DaemonSet',
      metadata: { name: 'agent', namespace: NS, uid: 'uid-agent', generation: 3 },
      spec: { updateStrategy: { type } },
      status: { observedGeneration: 3, desiredNumberScheduled: 2, numberReady: 1 },
    } as KubeObject;
  }
  const gen = (g: number) => ({ app: 'agent', 'pod-template-generation': String(g) });
  const agentPods = [
    pod('agent-a', gen(1), { owner: 'uid-agent', ready: true }),
    pod('agent-b', gen(2), { owner: 'uid-agent' }),
  ];

  it('a DaemonSet with OnDelete: fails at once, naming the pods a human must delete', () => {
    expect(forcedRollback(daemonSet('OnDelete'), agentPods, undefined)).toEqual({
      kind: 'human',
      failure: {
        status: 'Failed',
        reason: 'OnDeleteStuckPods',
        message:
          'DaemonSet shop/agent: pod shop/agent-b (CrashLoopBackOff) run a template the rollback replaced, and updateStrategy OnDelete never replaces them: delete them (kubectl delete pod -n shop agent-b)',
      },
    });
  });

  it('a DaemonSet with RollingUpdate, or a Deployment: their controllers replace the pods themselves', () => {
    expect(forcedRollback(daemonSet('RollingUpdate'), agentPods, undefined)).toEqual({ kind: 'none' });
    const deployment = { ...daemonSet('RollingUpdate'), kind: 'Deployment' } as KubeObject;
    expect(forcedRollback(deployment, agentPods, 'x')).toEqual({ kind: 'none' });
  });
});

/**
 * What a rollback must do beyond restoring a workload's template, so that it finishes instead of
 * waiting for a pod its controller will never replace. Pure: the verify stage deletes the pods
 * (src/controller/stages/forced-rollback.ts).
 *
 * - StatefulSet: Kubernetes documents the "forced rollback": with OrderedReady (the default) a
 *   rolling update stops at a pod that never becomes Ready, and keeps waiting for it after the
 *   template is reverted; the pods it already ran with the bad configuration must be deleted, and
 *   the controller recreates them from the restored template. The same deletion finishes the
 *   rollback with a partition or OnDelete (a missing pod is created at the update revision, which
 *   is then the restored one). Only the set's members (controlled by it and named for one of its
 *   ordinals: statefulSetMembers), of the revision the change rolled out
 *   (not the restored one), and not Ready are deleted, unless the controller replaces them itself
 *   (Parallel with RollingUpdate, at or above the partition). A stuck pod of a revision it cannot call
 *   its own is never deleted; if the controller will not replace it, a human is told at once.
 * - DaemonSet with updateStrategy OnDelete: its controller never replaces a pod, so a stuck pod of
 *   another template stays stuck; the check fails at once, naming the pods a human must delete.
 *   (RollingUpdate replaces them, as a Deployment's rollback scales the bad ReplicaSet down.)
 */
import type { KubeObject } from '../kube/resources.ts';
import { assessment, describeObject, type HealthAssessment, numberAt, stringAt } from './fields.ts';
import { assessPod, containerFailure, controlledBy, memberOrdinal, statefulSetMembers } from './pods.ts';

export interface StuckPod {
  pod: KubeObject;
  /** "CrashLoopBackOff", "PodNotReady": what it is stuck in. */
  why: string;
}

export type ForcedRollback =
  /** Nothing to do: the controller finishes the rollback by itself, or is not there yet. */
  | { kind: 'none' }
  /** Delete these pods (with their uid as precondition); the controller recreates them. */
  | { kind: 'delete'; revision: string; pods: StuckPod[] }
  /** Nothing Janus may do; the check fails at once with this. */
  | { kind: 'human'; failure: HealthAssessment };

const NONE: ForcedRollback = { kind: 'none' };

/**
 * `workload` as it is after the rollback restored it, the pods the gate sees for it, and the
 * revision the transaction's change rolled out (ItemStatus.rolloutRevision), if recorded.
 */
export function forcedRollback(
  workload: KubeObject,
  pods: readonly KubeObject[],
  rolloutRevision: string | undefined,
): ForcedRollback {
  if (workload.apiVersion !== 'apps/v1') return NONE;
  if (workload.kind === 'StatefulSet') return statefulSetStep(workload, pods, rolloutRevision);
  if (workload.kind === 'DaemonSet') return daemonSetStep(workload, pods);
  return NONE;
}

function statefulSetStep(
  sts: KubeObject,
  pods: readonly KubeObject[],
  badRevision: string | undefined,
): ForcedRollback {
  if (!seesItsSpec(sts)) return NONE;
  // Its controller has made the restored template the update revision: never delete those pods.
  const restored = stringAt(sts, 'status', 'updateRevision');
  if (!restored || restored === badRevision) return NONE;
  const stuck = statefulSetMembers(sts, pods)
    .filter((p) => badRevision && p.metadata.labels?.['controller-revision-hash'] === badRevision)
    .filter((p) => !p.metadata.deletionTimestamp && !replacesItself(sts, p))
    .flatMap((pod) => {
      const health = assessPod(pod);
      return health.status === 'Current' ? [] : [{ pod, why: health.reason }];
    });
  if (badRevision && stuck.length > 0) return { kind: 'delete', revision: badRevision, pods: stuck };
  return unknownRevisionStuck(sts, pods, [restored, badRevision]);
}

/**
 * With podManagementPolicy Parallel and a RollingUpdate, the set's controller deletes a pod of
 * another revision at or above the partition by itself, stuck or not (it waits for no pod first):
 * Janus deletes nothing, and needs no right to. (With the MaxUnavailableStatefulSet feature gate,
 * off by default, it waits for unavailable pods as OrderedReady does; the check then times out
 * naming the pod.)
 */
function replacesItself(sts: KubeObject, pod: KubeObject): boolean {
  if (stringAt(sts, 'spec', 'podManagementPolicy') !== 'Parallel') return false;
  if (stringAt(sts, 'spec', 'updateStrategy', 'type') === 'OnDelete') return false;
  const ordinal = memberOrdinal(sts.metadata.name, pod.metadata.name);
  const partition = numberAt(sts, 'spec', 'updateStrategy', 'rollingUpdate', 'partition') ?? 0;
  return ordinal !== undefined && ordinal >= partition;
}

/**
 * A pod of yet another revision (not restored, not current, not the one the change rolled out:
 * the revision could not be recorded, or someone else's) that cannot start. Janus does not delete
 * what it cannot prove is its own; when the set's controller will not replace it either
 * (OrderedReady waits for it; OnDelete never replaces), waiting is pointless: a human decides.
 */
function unknownRevisionStuck(
  sts: KubeObject,
  pods: readonly KubeObject[],
  known: ReadonlyArray<string | undefined>,
): ForcedRollback {
  const parallel = stringAt(sts, 'spec', 'podManagementPolicy') === 'Parallel';
  const onDelete = stringAt(sts, 'spec', 'updateStrategy', 'type') === 'OnDelete';
  if (parallel && !onDelete) return NONE;
  const current = stringAt(sts, 'status', 'currentRevision');
  const stuck = statefulSetMembers(sts, pods).filter((p) => {
    const revision = p.metadata.labels?.['controller-revision-hash'];
    return (
      !p.metadata.deletionTimestamp &&
      revision !== undefined &&
      revision !== current &&
      !known.includes(revision) &&
      containerFailure(p) !== undefined
    );
  });
  if (stuck.length === 0) return NONE;
  const namespace = sts.metadata.namespace ?? '';
  const why = onDelete ? 'updateStrategy OnDelete never replaces them' : 'OrderedReady waits for them';
  return {
    kind: 'human',
    failure: assessment(
      sts,
      'Failed',
      'ForcedRollbackNeeded',
      `${describePods(stuck.map((pod) => ({ pod, why: containerFailure(pod)?.reason ?? '' })))} of a revision this transaction did not record as its own cannot start, and ${why}: delete them (kubectl delete pod -n ${namespace} ${stuck.map((p) => p.metadata.name).join(' ')})`,
    ),
  };
}

function daemonSetStep(ds: KubeObject, pods: readonly KubeObject[]): ForcedRollback {
  if (stringAt(ds, 'spec', 'updateStrategy', 'type') !== 'OnDelete' || !seesItsSpec(ds)) return NONE;
  const generation = String(ds.metadata.generation ?? '');
  const stuck = controlledBy(ds, pods).filter(
    (p) =>
      !p.metadata.deletionTimestamp &&
      p.metadata.labels?.['pod-template-generation'] !== generation &&
      containerFailure(p) !== undefined,
  );
  if (stuck.length === 0) return NONE;
  const names = stuck.map((p) => p.metadata.name);
  const namespace = ds.metadata.namespace ?? '';
  return {
    kind: 'human',
    failure: assessment(
      ds,
      'Failed',
      'OnDeleteStuckPods',
      `${describePods(stuck.map((pod) => ({ pod, why: containerFailure(pod)?.reason ?? '' })))} run a template the rollback replaced, and updateStrategy OnDelete never replaces them: delete them (kubectl delete pod -n ${namespace} ${names.join(' ')})`,
    ),
  };
}

/** Its controller has seen its current spec (the restored template), so its status speaks of it. */
function seesItsSpec(obj: KubeObject): boolean {
  const observed = numberAt(obj, 'status', 'observedGeneration');
  return observed !== undefined && observed >= (obj.metadata.generation ?? 0);
}

/** "pod shop/db-2 (CrashLoopBackOff), pod shop/db-1 (PodNotReady)". */
export function describePods(stuck: readonly StuckPod[]): string {
  return stuck.map((s) => `pod ${describeObject(s.pod).slice('Pod '.length)} (${s.why})`).join(', ');
}

/** Why the deletion could not be made, as the check's failure: what a human must do instead. */
export function deletionRefused(
  workload: KubeObject,
  step: Extract<ForcedRollback, { kind: 'delete' }>,
  serviceAccount: string,
  refusal: string,
): HealthAssessment {
  const namespace = workload.metadata.namespace ?? '';
  const names = step.pods.map((s) => s.pod.metadata.name).join(' ');
  return assessment(
    workload,
    'Failed',
    'ForcedRollbackRefused',
    `${describePods(step.pods)} of revision ${step.revision} will not be replaced by its controller (forced rollback); ServiceAccount ${serviceAccount} may not delete pods (${refusal}): grant it delete on pods in ${namespace}, or delete them by hand (kubectl delete pod -n ${namespace} ${names})`,
  );
}

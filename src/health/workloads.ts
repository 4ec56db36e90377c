/**
 * The kind-specific rules: when a rollout is complete, by the counters and conditions each
 * controller publishes (the kstatus rules), and when it cannot complete.
 */
import type { KubeObject } from '../kube/resources.ts';
import {
  arrayAt,
  assessment,
  conditionOf,
  fieldAt,
  type HealthAssessment,
  isTrue,
  numberAt,
  type RelatedObjects,
  said,
  stringAt,
} from './fields.ts';
import { controlledBy, failingPod, newestRevisionPods, statefulSetMembers } from './pods.ts';

const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';

/** Counters from a controller that has never reported are zeros that mean nothing. */
function notYetObserved(obj: KubeObject): HealthAssessment | undefined {
  if (numberAt(obj, 'status', 'observedGeneration') !== undefined) return undefined;
  return assessment(
    obj,
    'InProgress',
    'LatestGenerationNotObserved',
    'its controller has not reported a status yet',
  );
}

/** A rollout still in progress is a failed one if a pod of its new revision cannot start. */
function unlessPodsFail(
  obj: KubeObject,
  verdict: HealthAssessment,
  pods: readonly KubeObject[],
): HealthAssessment {
  return verdict.status === 'InProgress' ? (failingPod(obj, pods) ?? verdict) : verdict;
}

const specReplicas = (obj: KubeObject): number => numberAt(obj, 'spec', 'replicas') ?? 1;
const statusCount = (obj: KubeObject, field: string): number => numberAt(obj, 'status', field) ?? 0;

export function assessDeployment(obj: KubeObject, related: RelatedObjects): HealthAssessment {
  const progressing = conditionOf(obj, 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded' && progressing.status !== 'True') {
    const deadline = numberAt(obj, 'spec', 'progressDeadlineSeconds') ?? 600;
    return assessment(
      obj,
      'Failed',
      'ProgressDeadlineExceeded',
      `rollout made no progress within ${deadline}s${said(progressing.message)}`,
    );
  }
  const verdict = notYetObserved(obj) ?? deploymentRollout(obj, progressing?.reason);
  return unlessPodsFail(obj, verdict, newDeploymentPods(obj, related));
}

function deploymentRollout(obj: KubeObject, progressingReason: string | undefined): HealthAssessment {
  const replicas = specReplicas(obj);
  const updated = statusCount(obj, 'updatedReplicas');
  const available = statusCount(obj, 'availableReplicas');
  const total = statusCount(obj, 'replicas');
  const ready = statusCount(obj, 'readyReplicas');
  const paused = fieldAt(obj, 'spec', 'paused') === true ? ' (rollout paused)' : '';
  const inProgress = (reason: string, detail: string) =>
    assessment(obj, 'InProgress', reason, detail + paused);
  if (updated < replicas)
    return inProgress('UpdatedReplicasPending', `${updated} of ${replicas} replicas updated`);
  if (available < updated) {
    return inProgress('UpdatedReplicasNotAvailable', `${available} of ${updated} updated replicas available`);
  }
  if (total > updated) {
    return inProgress('OldReplicasPendingTermination', `${total - updated} old replicas pending termination`);
  }
  if (ready < replicas) return inProgress('ReplicasNotReady', `${ready} of ${replicas} replicas ready`);
  if (progressingReason !== 'NewReplicaSetAvailable') {
    return inProgress('NewReplicaSetNotAvailable', 'the new ReplicaSet is not reported available yet');
  }
  const availableCondition = conditionOf(obj, 'Available');
  if (!isTrue(availableCondition)) {
    return inProgress('DeploymentNotAvailable', `not Available${said(availableCondition?.message)}`);
  }
  return assessment(
    obj,
    'Current',
    'RolloutComplete',
    `${available} of ${replicas} replicas updated and available`,
  );
}

/**
 * The pods of the Deployment's current revision. Only pods controlled by a ReplicaSet the
 * Deployment controls count (a look-alike pod or ReplicaSet is someone else's); of those, the
 * pods of the ReplicaSet whose revision annotation matches the Deployment's, or, when none does
 * yet, those with the newest pod-template-hash.
 */
export function newDeploymentPods(obj: KubeObject, related: RelatedObjects): KubeObject[] {
  const replicaSets = controlledBy(obj, related.replicaSets ?? []);
  const revision = obj.metadata.annotations?.[REVISION_ANNOTATION];
  const newReplicaSet = replicaSets.find(
    (rs) => revision !== undefined && rs.metadata.annotations?.[REVISION_ANNOTATION] === revision,
  );
  if (newReplicaSet) return controlledBy(newReplicaSet, related.pods ?? []);
  const owned = replicaSets.flatMap((rs) => controlledBy(rs, related.pods ?? []));
  return newestRevisionPods(owned, 'pod-template-hash');
}

/** The StatefulSet's members of its update revision (or, before it reports one, the newest). */
export function newStatefulSetPods(obj: KubeObject, related: RelatedObjects): KubeObject[] {
  const updateRevision = stringAt(obj, 'status', 'updateRevision');
  const owned = statefulSetMembers(obj, related.pods ?? []);
  return updateRevision
    ? owned.filter((p) => p.metadata.labels?.['controller-revision-hash'] === updateRevision)
    : newestRevisionPods(owned, 'controller-revision-hash');
}

export function assessStatefulSet(obj: KubeObject, related: RelatedObjects): HealthAssessment {
  return unlessPodsFail(
    obj,
    notYetObserved(obj) ?? statefulSetRollout(obj),
    newStatefulSetPods(obj, related),
  );
}

function statefulSetRollout(obj: KubeObject): HealthAssessment {
  const replicas = specReplicas(obj);
  const ready = statusCount(obj, 'readyReplicas');
  const updated = statusCount(obj, 'updatedReplicas');
  const inProgress = (reason: string, detail: string) => assessment(obj, 'InProgress', reason, detail);
  if (statusCount(obj, 'replicas') > replicas) {
    return inProgress(
      'ReplicasPendingTermination',
      `${statusCount(obj, 'replicas') - replicas} replicas pending termination`,
    );
  }
  if (ready < replicas) return inProgress('ReplicasNotReady', `${ready} of ${replicas} replicas ready`);
  // OnDelete: pods change only when someone deletes them, so there is no rollout to wait for.
  if (stringAt(obj, 'spec', 'updateStrategy', 'type') === 'OnDelete') {
    return assessment(
      obj,
      'Current',
      'OnDeleteStrategy',
      `${ready} of ${replicas} replicas ready; pods are updated only when deleted (OnDelete)`,
    );
  }
  const partition = numberAt(obj, 'spec', 'updateStrategy', 'rollingUpdate', 'partition') ?? 0;
  if (partition > 0) {
    const expected = Math.max(0, replicas - partition);
    if (updated < expected) {
      return inProgress(
        'UpdatedReplicasPending',
        `${updated} of ${expected} replicas above partition ${partition} updated`,
      );
    }
    return assessment(
      obj,
      'Current',
      'PartitionRolloutComplete',
      `${updated} replicas above partition ${partition} updated, ${ready} ready`,
    );
  }
  if (updated < replicas)
    return inProgress('UpdatedReplicasPending', `${updated} of ${replicas} replicas updated`);
  const current = statusCount(obj, 'currentReplicas');
  if (current < replicas)
    return inProgress('CurrentReplicasPending', `${current} of ${replicas} replicas at the current revision`);
  const currentRevision = stringAt(obj, 'status', 'currentRevision');
  const updateRevision = stringAt(obj, 'status', 'updateRevision');
  if (currentRevision !== updateRevision) {
    return inProgress(
      'RevisionNotCurrent',
      `update revision ${updateRevision} is not yet the current revision ${currentRevision}`,
    );
  }
  return assessment(obj, 'Current', 'RolloutComplete', `${ready} of ${replicas} replicas updated and ready`);
}

/** The DaemonSet's pods of its current template. */
export function newDaemonSetPods(obj: KubeObject, related: RelatedObjects): KubeObject[] {
  const owned = controlledBy(obj, related.pods ?? []);
  // The DaemonSet controller labels each pod with the generation of the template it was made from.
  const generation = obj.metadata.generation;
  return generation !== undefined
    ? owned.filter((p) => p.metadata.labels?.['pod-template-generation'] === String(generation))
    : newestRevisionPods(owned, 'controller-revision-hash');
}

export function assessDaemonSet(obj: KubeObject, related: RelatedObjects): HealthAssessment {
  return unlessPodsFail(obj, notYetObserved(obj) ?? daemonSetRollout(obj), newDaemonSetPods(obj, related));
}

function daemonSetRollout(obj: KubeObject): HealthAssessment {
  const desired = statusCount(obj, 'desiredNumberScheduled');
  const scheduled = statusCount(obj, 'currentNumberScheduled');
  const updated = statusCount(obj, 'updatedNumberScheduled');
  const available = statusCount(obj, 'numberAvailable');
  const ready = statusCount(obj, 'numberReady');
  const inProgress = (reason: string, detail: string) => assessment(obj, 'InProgress', reason, detail);
  if (scheduled < desired)
    return inProgress('PodsNotScheduled', `${scheduled} of ${desired} nodes run a pod`);
  // As for a StatefulSet, OnDelete means old pods stay until someone deletes them.
  const onDelete = stringAt(obj, 'spec', 'updateStrategy', 'type') === 'OnDelete';
  if (!onDelete && updated < desired)
    return inProgress('UpdatedPodsPending', `${updated} of ${desired} pods updated`);
  if (available < desired) return inProgress('PodsNotAvailable', `${available} of ${desired} pods available`);
  if (ready < desired) return inProgress('PodsNotReady', `${ready} of ${desired} pods ready`);
  return assessment(
    obj,
    'Current',
    'RolloutComplete',
    `${available} of ${desired} pods updated and available`,
  );
}

export function assessReplicaSet(obj: KubeObject, related: RelatedObjects): HealthAssessment {
  return unlessPodsFail(
    obj,
    notYetObserved(obj) ?? replicaSetCounts(obj),
    controlledBy(obj, related.pods ?? []),
  );
}

function replicaSetCounts(obj: KubeObject): HealthAssessment {
  const replicas = specReplicas(obj);
  const total = statusCount(obj, 'replicas');
  const ready = statusCount(obj, 'readyReplicas');
  const available = statusCount(obj, 'availableReplicas');
  const inProgress = (reason: string, detail: string) => assessment(obj, 'InProgress', reason, detail);
  // ReplicaFailure (quota, admission) may clear on its own, so kstatus keeps waiting.
  const failure = conditionOf(obj, 'ReplicaFailure');
  if (isTrue(failure))
    return inProgress(failure?.reason ?? 'ReplicaFailure', `cannot create pods${said(failure?.message)}`);
  if (total > replicas)
    return inProgress('ReplicasPendingTermination', `${total - replicas} replicas pending termination`);
  if (ready < replicas) return inProgress('ReplicasNotReady', `${ready} of ${replicas} replicas ready`);
  if (available < replicas)
    return inProgress('ReplicasNotAvailable', `${available} of ${replicas} replicas available`);
  return assessment(obj, 'Current', 'ReplicasAvailable', `${available} of ${replicas} replicas available`);
}

export function assessJob(obj: KubeObject, related: RelatedObjects): HealthAssessment {
  // FailureTarget comes first: the Job is terminating its pods and is about to be Failed.
  for (const type of ['Failed', 'FailureTarget']) {
    const failed = conditionOf(obj, type);
    if (isTrue(failed)) {
      return assessment(obj, 'Failed', failed?.reason ?? 'JobFailed', `failed${said(failed?.message)}`);
    }
  }
  if (isTrue(conditionOf(obj, 'Complete'))) {
    return assessment(
      obj,
      'Current',
      'JobComplete',
      `completed, ${statusCount(obj, 'succeeded')} pods succeeded`,
    );
  }
  if (fieldAt(obj, 'spec', 'suspend') === true)
    return assessment(obj, 'InProgress', 'JobSuspended', 'suspended');
  const counts = `${statusCount(obj, 'active')} active, ${statusCount(obj, 'succeeded')} succeeded, ${statusCount(obj, 'failed')} failed pods`;
  const running = assessment(obj, 'InProgress', 'JobRunning', `running: ${counts}`);
  return unlessPodsFail(obj, running, controlledBy(obj, related.pods ?? []));
}

export function assessPersistentVolumeClaim(obj: KubeObject): HealthAssessment {
  const phase = stringAt(obj, 'status', 'phase') ?? 'Pending';
  if (phase === 'Bound') return assessment(obj, 'Current', 'ClaimBound', 'bound');
  // Lost: the bound volume is gone, and no controller will bring it back.
  if (phase === 'Lost') return assessment(obj, 'Failed', 'ClaimLost', 'lost its bound volume');
  return assessment(obj, 'InProgress', 'ClaimNotBound', `not bound (phase ${phase})`);
}

export function assessService(obj: KubeObject): HealthAssessment {
  if (stringAt(obj, 'spec', 'type') !== 'LoadBalancer') {
    return assessment(obj, 'Current', 'ServiceReady', 'ready');
  }
  if (arrayAt(obj, 'status', 'loadBalancer', 'ingress').length === 0) {
    return assessment(
      obj,
      'InProgress',
      'LoadBalancerPending',
      'waiting for the load balancer to get an address',
    );
  }
  return assessment(obj, 'Current', 'LoadBalancerReady', 'load balancer has an address');
}

/**
 * Pod health, and the failure signs a workload's status cannot show: its counters say "1 of 2
 * available" whether the missing pod is starting or crash-looping, only the pod tells which.
 */
import type { KubeObject } from '../kube/resources.ts';
import {
  arrayAt,
  assessment,
  conditionOf,
  describeObject,
  type HealthAssessment,
  isTrue,
  numberAt,
  said,
  stringAt,
} from './fields.ts';

/** Container waiting reasons that do not resolve by waiting: the image or the config must change. */
export const POD_FAILURE_REASONS: ReadonlySet<string> = new Set([
  'CrashLoopBackOff',
  'ImagePullBackOff',
  'ErrImagePull',
  'CreateContainerConfigError',
  'InvalidImageName',
]);

export interface ContainerFailure {
  container: string;
  reason: string;
  message?: string;
}

/** The first container (init containers first, as they run first) stuck for a failure reason. */
export function containerFailure(pod: KubeObject): ContainerFailure | undefined {
  const statuses = [
    ...arrayAt(pod, 'status', 'initContainerStatuses'),
    ...arrayAt(pod, 'status', 'containerStatuses'),
  ];
  for (const s of statuses) {
    const reason = stringAt(s, 'state', 'waiting', 'reason');
    if (reason === undefined || !POD_FAILURE_REASONS.has(reason)) continue;
    const message = stringAt(s, 'state', 'waiting', 'message');
    return { container: stringAt(s, 'name') ?? '(unnamed)', reason, ...(message && { message }) };
  }
  return undefined;
}

function notReadyContainers(pod: KubeObject): string {
  return arrayAt(pod, 'status', 'containerStatuses')
    .filter((s) => (s as { ready?: unknown }).ready !== true)
    .map((s) => {
      const waiting = stringAt(s, 'state', 'waiting', 'reason');
      return `${stringAt(s, 'name') ?? '(unnamed)'}${waiting ? ` (${waiting})` : ''}`;
    })
    .join(', ');
}

export function assessPod(pod: KubeObject): HealthAssessment {
  const phase = stringAt(pod, 'status', 'phase') ?? 'Pending';
  if (phase === 'Succeeded') return assessment(pod, 'Current', 'PodSucceeded', 'completed successfully');
  if (phase === 'Failed') {
    const why = stringAt(pod, 'status', 'reason');
    return assessment(
      pod,
      'Failed',
      'PodFailed',
      `failed${why ? ` (${why})` : ''}${said(stringAt(pod, 'status', 'message'))}`,
    );
  }
  const failure = containerFailure(pod);
  if (failure) {
    return assessment(
      pod,
      'Failed',
      failure.reason,
      `container ${failure.container} is in ${failure.reason}${said(failure.message)}`,
    );
  }
  if (phase === 'Running' && isTrue(conditionOf(pod, 'Ready'))) {
    return assessment(pod, 'Current', 'PodReady', 'running and ready');
  }
  const scheduled = conditionOf(pod, 'PodScheduled');
  if (scheduled?.status === 'False') {
    return assessment(
      pod,
      'InProgress',
      scheduled.reason ?? 'PodNotScheduled',
      `not scheduled${said(scheduled.message)}`,
    );
  }
  const waitingOn = notReadyContainers(pod);
  return assessment(
    pod,
    'InProgress',
    'PodNotReady',
    `${phase}, not ready${waitingOn ? `: ${waitingOn}` : ''}`,
  );
}

/** A workload fails when one of its (new-revision) pods is stuck for a reason waiting cannot fix. */
export function failingPod(workload: KubeObject, pods: readonly KubeObject[]): HealthAssessment | undefined {
  for (const pod of pods) {
    const failure = containerFailure(pod);
    if (!failure) continue;
    return assessment(
      workload,
      'Failed',
      failure.reason,
      `pod ${describeObject(pod).slice('Pod '.length)} container ${failure.container} is in ${failure.reason}${said(failure.message)}`,
    );
  }
  return undefined;
}

/**
 * The objects whose controller is `owner`: an ownerReference with controller=true naming the
 * owner's uid. Anyone who may create pods in the namespace can label a bare pod like a workload's
 * (even with its revision hash), so an object without a controller reference, or one whose
 * controller is another object, never counts: a decoy must not fail, or pass, someone else's gate.
 * Without a uid on either side nothing can prove ownership, so nothing counts.
 */
export function controlledBy(owner: KubeObject, objects: readonly KubeObject[]): KubeObject[] {
  const uid = owner.metadata.uid;
  if (!uid) return [];
  return objects.filter((o) => o.metadata.ownerReferences?.find((r) => r.controller)?.uid === uid);
}

/**
 * The pods of a StatefulSet that may be its members: controlled by it (controlledBy) and named
 * `<set>-<ordinal>` with an ordinal it has now (spec.ordinals.start up to replicas of them). A
 * controller reference is no proof by itself: whoever may create pods in the namespace can write
 * one naming the set's uid (readable with `get`), and the set's own controller then takes the
 * pod for a member beyond its replicas, waiting to remove it until its own pods are available.
 * A pod by the name of one of its ordinals cannot be created while the set's own pod holds the
 * name; the set's controller deletes such a pod only to replace it, a moment later.
 */
export function statefulSetMembers(sts: KubeObject, pods: readonly KubeObject[]): KubeObject[] {
  const name = sts.metadata.name;
  const start = numberAt(sts, 'spec', 'ordinals', 'start') ?? 0;
  const replicas = numberAt(sts, 'spec', 'replicas') ?? 1;
  return controlledBy(sts, pods).filter((pod) => {
    const ordinal = memberOrdinal(name, pod.metadata.name);
    return ordinal !== undefined && ordinal >= start && ordinal < start + replicas;
  });
}

/** N of a pod named `<set>-N` (N in decimal, no leading zero, as the set's controller names them). */
export function memberOrdinal(setName: string, podName: string): number | undefined {
  if (!podName.startsWith(`${setName}-`)) return undefined;
  const digits = podName.slice(setName.length + 1);
  return /^(0|[1-9]\d{0,8})$/.test(digits) ? Number(digits) : undefined;
}

/**
 * The pods carrying the newest value of `label` (by creation time): the revision being rolled out,
 * when the workload does not say which one it is.
 */
export function newestRevisionPods(pods: readonly KubeObject[], label: string): KubeObject[] {
  const labelled = pods.filter((p) => p.metadata.labels?.[label] !== undefined);
  const newest = labelled.reduce<KubeObject | undefined>(
    (best, p) =>
      !best || (p.metadata.creationTimestamp ?? '') > (best.metadata.creationTimestamp ?? '') ? p : best,
    undefined,
  );
  const revision = newest?.metadata.labels?.[label];
  return labelled.filter((p) => p.metadata.labels?.[label] === revision);
}

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

/** Pods whose controller is `owner` (pods with no controller reference are taken as the caller's choice). */
export function podsControlledBy(owner: KubeObject, pods: readonly KubeObject[]): KubeObject[] {
  return pods.filter((pod) => {
    const controller = pod.metadata.ownerReferences?.find((r) => r.controller);
    if (!controller) return true;
    if (controller.uid && owner.metadata.uid) return controller.uid === owner.metadata.uid;
    return controller.kind === owner.kind && controller.name === owner.metadata.name;
  });
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

/**
 * Is an object healthy? The kstatus rules (sigs.k8s.io/cli-utils pkg/kstatus/status) users know
 * from Flux and `kubectl wait`: first what holds for every kind (deletion, generation observed,
 * Stalled/Reconciling), then the rule of its kind, else its Ready condition.
 * Pure: the caller reads the object and, for workloads, its pods.
 */
import type { KubeObject } from '../kube/resources.ts';
import { splitApiVersion } from '../kube/resources.ts';
import {
  assessment,
  conditionOf,
  type HealthAssessment,
  isTrue,
  numberAt,
  type RelatedObjects,
  said,
} from './fields.ts';
import { assessPod } from './pods.ts';
import {
  assessDaemonSet,
  assessDeployment,
  assessJob,
  assessPersistentVolumeClaim,
  assessReplicaSet,
  assessService,
  assessStatefulSet,
} from './workloads.ts';

type Rule = (obj: KubeObject, related: RelatedObjects) => HealthAssessment;

/** Keyed by "group/Kind" ("" for the core group): any served version follows the same rule. */
const RULES: ReadonlyMap<string, Rule> = new Map<string, Rule>([
  ['apps/Deployment', assessDeployment],
  ['apps/StatefulSet', assessStatefulSet],
  ['apps/DaemonSet', assessDaemonSet],
  ['apps/ReplicaSet', assessReplicaSet],
  ['batch/Job', assessJob],
  ['/Pod', assessPod],
  ['/PersistentVolumeClaim', assessPersistentVolumeClaim],
  ['/Service', assessService],
]);

function ruleFor(apiVersion: string, kind: string): Rule | undefined {
  return RULES.get(`${splitApiVersion(apiVersion).group}/${kind}`);
}

/** Kinds with a rule of their own: the ones the health gate checks by default. */
export function hasHealthRule(apiVersion: string, kind: string): boolean {
  return ruleFor(apiVersion, kind) !== undefined;
}

export function assessHealth(obj: KubeObject, related: RelatedObjects = {}): HealthAssessment {
  const rule = ruleFor(obj.apiVersion, obj.kind);
  return assessGeneric(obj) ?? (rule ? rule(obj, related) : assessReadyCondition(obj));
}

/** What holds for every kind, before its own rule has a say. */
function assessGeneric(obj: KubeObject): HealthAssessment | undefined {
  if (obj.metadata.deletionTimestamp) return assessment(obj, 'InProgress', 'Terminating', 'being deleted');
  const generation = obj.metadata.generation;
  const observed = numberAt(obj, 'status', 'observedGeneration');
  if (generation !== undefined && observed !== undefined && observed < generation) {
    return assessment(
      obj,
      'InProgress',
      'LatestGenerationNotObserved',
      `generation ${generation} not yet observed by its controller (observed ${observed})`,
    );
  }
  // Stalled before Reconciling: a controller that keeps retrying must not hide that it is stuck.
  const stalled = conditionOf(obj, 'Stalled');
  if (isTrue(stalled))
    return assessment(obj, 'Failed', stalled?.reason ?? 'Stalled', `stalled${said(stalled?.message)}`);
  const reconciling = conditionOf(obj, 'Reconciling');
  if (isTrue(reconciling)) {
    return assessment(
      obj,
      'InProgress',
      reconciling?.reason ?? 'Reconciling',
      `reconciling${said(reconciling?.message)}`,
    );
  }
  return undefined;
}

/** A kind without a rule: its Ready condition if it has one, else nothing says it is not ready. */
function assessReadyCondition(obj: KubeObject): HealthAssessment {
  const ready = conditionOf(obj, 'Ready');
  if (!ready)
    return assessment(obj, 'Current', 'NoHealthRule', 'no health rule for its kind and no Ready condition');
  if (ready.status === 'True')
    return assessment(obj, 'Current', ready.reason ?? 'Ready', `ready${said(ready.message)}`);
  return assessment(
    obj,
    'InProgress',
    ready.reason ?? 'NotReady',
    `not ready, Ready=${ready.status}${said(ready.message)}`,
  );
}

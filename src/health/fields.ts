/**
 * Typed reads of the loosely typed parts of a Kubernetes object (spec, status, conditions) and the
 * shape every health rule answers with.
 */
import type { KubeObject } from '../kube/resources.ts';

/** kstatus's three outcomes that matter to a gate: done, not done yet, will not get done. */
export type HealthStatus = 'Current' | 'InProgress' | 'Failed';

export interface HealthAssessment {
  status: HealthStatus;
  /** CamelCase, e.g. "ProgressDeadlineExceeded", "CrashLoopBackOff". */
  reason: string;
  /** A sentence naming the object and what is not ready, e.g. "Deployment shop/web: 1 of 2 …". */
  message: string;
}

/** Objects a rule may look through, e.g. a workload's pods, to see failure signs its status hides. */
export interface RelatedObjects {
  pods?: readonly KubeObject[];
  /** A Deployment's ReplicaSets: they tell which pods belong to the new revision. */
  replicaSets?: readonly KubeObject[];
}

export interface ConditionView {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export function fieldAt(obj: unknown, ...path: string[]): unknown {
  let at: unknown = obj;
  for (const key of path) {
    if (typeof at !== 'object' || at === null) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

export function numberAt(obj: unknown, ...path: string[]): number | undefined {
  const v = fieldAt(obj, ...path);
  return typeof v === 'number' ? v : undefined;
}

export function stringAt(obj: unknown, ...path: string[]): string | undefined {
  const v = fieldAt(obj, ...path);
  return typeof v === 'string' ? v : undefined;
}

export function arrayAt(obj: unknown, ...path: string[]): unknown[] {
  const v = fieldAt(obj, ...path);
  return Array.isArray(v) ? v : [];
}

export function conditionsOf(obj: KubeObject): ConditionView[] {
  return arrayAt(obj, 'status', 'conditions').flatMap((c) => {
    const type = stringAt(c, 'type');
    const status = stringAt(c, 'status');
    if (type === undefined || status === undefined) return [];
    const reason = stringAt(c, 'reason');
    const message = stringAt(c, 'message');
    return [{ type, status, ...(reason && { reason }), ...(message && { message }) }];
  });
}

export function conditionOf(obj: KubeObject, type: string): ConditionView | undefined {
  return conditionsOf(obj).find((c) => c.type === type);
}

export const isTrue = (c: ConditionView | undefined): boolean => c?.status === 'True';

/** "Deployment shop/web", or "ClusterRole admin" for a cluster-scoped object. */
export function describeObject(obj: KubeObject): string {
  const { namespace, name } = obj.metadata;
  return `${obj.kind} ${namespace ? `${namespace}/` : ''}${name}`;
}

export function assessment(
  obj: KubeObject,
  status: HealthStatus,
  reason: string,
  detail: string,
): HealthAssessment {
  return { status, reason, message: `${describeObject(obj)}: ${detail}` };
}

/** A condition's own words, as a suffix: " (Back-off pulling image …)". */
export const said = (message: string | undefined): string => (message ? ` (${message})` : '');

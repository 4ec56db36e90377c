/**
 * The kinds the built-in `view` ClusterRole may read: the only prior states a rollback store may
 * keep in its ConfigMap, which `view` reads too. Pure.
 *
 * Taken from the rules of `system:aggregate-to-view` in Kubernetes v1.36
 * (plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go, viewRules), by API group and kind,
 * any version. Not included: subresources and create-only kinds (Binding); the rules behind an
 * alpha feature gate (scheduling.k8s.io Workload, PodGroup); and every kind a cluster's own
 * ClusterRoles aggregate into `view` (label rbac.authorization.k8s.io/aggregate-to-view), since
 * Janus cannot tell which fields such a role was meant to expose: a custom resource's prior state
 * goes to the Secret, whoever else may read the resource itself.
 */

/** "group/Kind" ("" for the core group) of every kind `view` may read in a namespace. */
export const VIEW_READABLE_KINDS: ReadonlySet<string> = new Set([
  '/ConfigMap',
  '/Endpoints',
  '/Event',
  '/LimitRange',
  '/PersistentVolumeClaim',
  '/Pod',
  '/ReplicationController',
  '/ResourceQuota',
  '/Service',
  '/ServiceAccount',
  'apps/ControllerRevision',
  'apps/DaemonSet',
  'apps/Deployment',
  'apps/ReplicaSet',
  'apps/StatefulSet',
  'autoscaling/HorizontalPodAutoscaler',
  'batch/CronJob',
  'batch/Job',
  'discovery.k8s.io/EndpointSlice',
  'events.k8s.io/Event',
  'extensions/DaemonSet',
  'extensions/Deployment',
  'extensions/Ingress',
  'extensions/NetworkPolicy',
  'extensions/ReplicaSet',
  'networking.k8s.io/Ingress',
  'networking.k8s.io/NetworkPolicy',
  'policy/PodDisruptionBudget',
  // Dynamic resource allocation: GA (its feature gate locked on) since v1.34.
  'resource.k8s.io/ResourceClaim',
  'resource.k8s.io/ResourceClaimTemplate',
]);

/** Whether the built-in `view` role may read objects of this apiVersion and kind. */
export function viewMayRead(apiVersion: string, kind: string): boolean {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  return VIEW_READABLE_KINDS.has(`${group}/${kind}`);
}

/** A rule of a ClusterRole (rbac.authorization.k8s.io/v1 PolicyRule), as far as reads go. */
export interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs?: string[];
  resourceNames?: string[];
}

const READ_VERBS = ['get', 'list', 'watch', '*'];

/**
 * Whether these rules (a live ClusterRole's, aggregation included) let their holder read
 * objects of `resource` in `group`. As RBAC matches, with `*` for any group, resource or verb;
 * a rule narrowed to some names counts too (a named object can be the one being written).
 */
export function rulesMayRead(rules: readonly PolicyRule[], group: string, resource: string): boolean {
  return rules.some(
    (rule) =>
      (rule.apiGroups ?? []).some((g) => g === '*' || g === group) &&
      (rule.resources ?? []).some((r) => r === '*' || r === resource) &&
      (rule.verbs ?? []).some((v) => READ_VERBS.includes(v)),
  );
}

/**
 * The order a source's objects are applied in (pure; docs/sources.md, "What a commit does"):
 * Namespaces, then CustomResourceDefinitions, then the rest in Helm's install order by kind
 * (helm's pkg/release/v1/util/kind_sorter.go; kinds it does not know last, by kind name), the
 * order of the render kept among equals. Helm hooks (docs/sources.md, "Helm hooks"): with
 * Ignore none is kept; with Include pre-install/pre-upgrade hooks come first and
 * post-install/post-upgrade hooks last, each by `helm.sh/hook-weight` then kind, and any other
 * hook (test, delete, rollback) is dropped.
 */
import type { KubeObject } from '../kube/resources.ts';

/** Helm 4.3's install order by kind. */
const HELM_INSTALL_ORDER = [
  'PriorityClass',
  'Namespace',
  'NetworkPolicy',
  'ResourceQuota',
  'LimitRange',
  'PodSecurityPolicy',
  'PodDisruptionBudget',
  'ServiceAccount',
  'Secret',
  'SecretList',
  'ConfigMap',
  'StorageClass',
  'PersistentVolume',
  'PersistentVolumeClaim',
  'CustomResourceDefinition',
  'ClusterRole',
  'ClusterRoleList',
  'ClusterRoleBinding',
  'ClusterRoleBindingList',
  'Role',
  'RoleList',
  'RoleBinding',
  'RoleBindingList',
  'Service',
  'DaemonSet',
  'Pod',
  'ReplicationController',
  'ReplicaSet',
  'Deployment',
  'HorizontalPodAutoscaler',
  'StatefulSet',
  'Job',
  'CronJob',
  'IngressClass',
  'Ingress',
  'APIService',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
] as const;

/** Namespaces and CRDs first, whatever Helm puts before them. */
const RANK = new Map<string, number>([
  ['Namespace', 0],
  ['CustomResourceDefinition', 1],
  ...HELM_INSTALL_ORDER.filter((k) => k !== 'Namespace' && k !== 'CustomResourceDefinition').map(
    (kind, i): [string, number] => [kind, i + 2],
  ),
]);

export const HOOK_ANNOTATION = 'helm.sh/hook';
export const HOOK_WEIGHT_ANNOTATION = 'helm.sh/hook-weight';

/** Where a Helm hook goes: applied before the rest, after it, or not at all. */
export type HookPlace = 'pre' | 'post' | 'dropped';

/** The hook place of `object`, or undefined when it is no hook. */
export function hookPlace(object: KubeObject): HookPlace | undefined {
  const value = object.metadata.annotations?.[HOOK_ANNOTATION];
  if (value === undefined) return undefined;
  const hooks = value.split(',').map((h) => h.trim());
  if (hooks.includes('pre-install') || hooks.includes('pre-upgrade')) return 'pre';
  if (hooks.includes('post-install') || hooks.includes('post-upgrade')) return 'post';
  return 'dropped';
}

/** Sorts by kind as described above; stable. */
export function byKind(objects: readonly KubeObject[]): KubeObject[] {
  return objects
    .map((object, index) => ({ object, index }))
    .sort((a, b) => compareKinds(a.object.kind, b.object.kind) || a.index - b.index)
    .map(({ object }) => object);
}

function compareKinds(a: string, b: string): number {
  const x = RANK.get(a);
  const y = RANK.get(b);
  if (x !== undefined && y !== undefined) return x - y;
  if (x !== undefined) return -1;
  if (y !== undefined) return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function weightOf(object: KubeObject): number {
  const weight = Number.parseInt(object.metadata.annotations?.[HOOK_WEIGHT_ANNOTATION] ?? '0', 10);
  return Number.isFinite(weight) ? weight : 0;
}

/** Hooks by weight, then kind, then name (as Helm runs them). */
function hooksInOrder(hooks: readonly KubeObject[]): KubeObject[] {
  return byKind(hooks)
    .map((object, index) => ({ object, index }))
    .sort((a, b) => weightOf(a.object) - weightOf(b.object) || a.index - b.index)
    .map(({ object }) => object);
}

/**
 * `objects` in apply order. `hooks`: how Helm hooks are treated (a Helm source's setting);
 * undefined for Kustomize and plain sources, whose annotations mean nothing here.
 */
export function applyOrder(objects: readonly KubeObject[], hooks?: 'Ignore' | 'Include'): KubeObject[] {
  if (hooks === undefined) return byKind(objects);
  const pre: KubeObject[] = [];
  const post: KubeObject[] = [];
  const rest: KubeObject[] = [];
  for (const object of objects) {
    const place = hookPlace(object);
    if (place === undefined) rest.push(object);
    else if (hooks === 'Include' && place === 'pre') pre.push(object);
    else if (hooks === 'Include' && place === 'post') post.push(object);
  }
  return [...hooksInOrder(pre), ...byKind(rest), ...hooksInOrder(post)];
}

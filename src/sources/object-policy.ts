/**
 * Every rendered object against the repository's policy (docs/sources.md, "The policy"), before
 * anything is applied: a namespaced object goes to its metadata.namespace, else the source's, and
 * that namespace must be one the repository may use; a cluster-scoped object loses any namespace
 * and is allowed only when --allowed-cluster-kinds lists its kind (unset: RBAC decides), and a
 * Namespace only when the repository may use it; the controller's namespace and kube-* never.
 * One refused object refuses the commit; each refusal names the object and the rule. Pure: the
 * scopes are looked up before (discovery in `janus run`, the built-in list offline).
 */
import { KNOWN_CLUSTER_SCOPED } from '../api/v1alpha1/index.ts';
import { groupOf } from '../gitops/names.ts';
import { clusterKindRefusal, namespaceRefusal, type RepositoryPolicy } from '../gitops/policy.ts';
import type { KubeObject } from '../kube/resources.ts';

/** Unknown: the cluster serves no such kind (and the render defines none). */
export type Scope = 'Namespaced' | 'Cluster' | 'Unknown';

/** "group/Kind" → scope. */
export type Scopes = ReadonlyMap<string, Scope>;

export function kindKey(apiVersion: string, kind: string): string {
  return `${groupOf(apiVersion)}/${kind}`;
}

const KNOWN_CLUSTER: ReadonlySet<string> = new Set(KNOWN_CLUSTER_SCOPED);

/**
 * The scopes the render settles by itself: the built-in cluster-scoped kinds, and the kinds of the
 * CustomResourceDefinitions it holds. The rest ("group/Kind" keys) are for the caller to look up.
 */
export function scopesFromRender(objects: readonly KubeObject[]): {
  known: Map<string, Scope>;
  /** The kinds left to look up, by "group/Kind", each with an apiVersion the render uses. */
  unknown: KindToLookUp[];
} {
  const known = new Map<string, Scope>();
  for (const key of KNOWN_CLUSTER) known.set(key, 'Cluster');
  for (const obj of objects) {
    if (obj.kind !== 'CustomResourceDefinition' || groupOf(obj.apiVersion) !== 'apiextensions.k8s.io')
      continue;
    const spec = (obj as { spec?: { group?: unknown; names?: { kind?: unknown }; scope?: unknown } }).spec;
    if (typeof spec?.group !== 'string' || typeof spec.names?.kind !== 'string') continue;
    known.set(`${spec.group}/${spec.names.kind}`, spec.scope === 'Cluster' ? 'Cluster' : 'Namespaced');
  }
  const unknown = new Map<string, KindToLookUp>();
  for (const obj of objects) {
    const key = kindKey(obj.apiVersion, obj.kind);
    if (!known.has(key) && !unknown.has(key))
      unknown.set(key, { key, apiVersion: obj.apiVersion, kind: obj.kind });
  }
  return { known, unknown: [...unknown.values()] };
}

export interface KindToLookUp {
  /** "group/Kind". */
  key: string;
  apiVersion: string;
  kind: string;
}

export interface ObjectRefusal {
  /** "<apiVersion> <kind> <namespace>/<name>"; none for a bound of the render as a whole. */
  object?: string;
  rule: 'namespace' | 'cluster-kind' | 'unknown-kind' | 'bounds' | 'sops';
  message: string;
}

export type PolicyCheck =
  | {
      ok: true;
      /** The objects with their namespaces resolved: set on every namespaced one, none on cluster-scoped ones. */
      objects: KubeObject[];
    }
  /** `more`: refused objects past the MAX_REFUSALS listed. */
  | { ok: false; refusals: ObjectRefusal[]; more: number };

/** At most this many refusals are kept: the first names the commit's problem, the count the rest. */
export const MAX_REFUSALS = 20;

export function checkRenderedObjects(
  objects: readonly KubeObject[],
  context: { namespace: string; policy: RepositoryPolicy; scopes: Scopes },
): PolicyCheck {
  const resolved: KubeObject[] = [];
  const refusals: ObjectRefusal[] = [];
  let refused = 0;
  const refuse = (refusal: ObjectRefusal) => {
    if (++refused <= MAX_REFUSALS) refusals.push(refusal);
  };
  for (const obj of objects) {
    const group = groupOf(obj.apiVersion);
    const scope = context.scopes.get(`${group}/${obj.kind}`) ?? 'Namespaced';
    if (scope === 'Cluster') {
      const { namespace: _dropped, ...metadata } = obj.metadata;
      const object = `${obj.apiVersion} ${obj.kind} ${obj.metadata.name}`;
      const kindProblem = clusterKindRefusal(context.policy, group, obj.kind);
      if (kindProblem) refuse({ object, rule: 'cluster-kind', message: `${object} ${kindProblem}` });
      else if (group === '' && obj.kind === 'Namespace') {
        const problem = namespaceRefusal(context.policy, obj.metadata.name);
        if (problem)
          refuse({
            object,
            rule: 'namespace',
            message: `${object}: namespace ${obj.metadata.name} ${problem}`,
          });
      }
      resolved.push({ ...obj, metadata });
      continue;
    }
    const namespace = obj.metadata.namespace || context.namespace;
    const object = `${obj.apiVersion} ${obj.kind} ${namespace}/${obj.metadata.name}`;
    if (scope === 'Unknown') {
      refuse({
        object,
        rule: 'unknown-kind',
        message: `${object}: the cluster serves no ${obj.kind} in ${obj.apiVersion}, and the render defines none`,
      });
      continue;
    }
    const problem = namespaceRefusal(context.policy, namespace);
    if (problem)
      refuse({ object, rule: 'namespace', message: `${object}: namespace ${namespace} ${problem}` });
    resolved.push({ ...obj, metadata: { ...obj.metadata, namespace } });
  }
  if (refused > 0) return { ok: false, refusals, more: refused - refusals.length };
  return { ok: true, objects: resolved };
}

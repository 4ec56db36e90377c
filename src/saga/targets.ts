/** Pure helpers about a change's target: where it lives, how it is named, how we mark our writes. */
import {
  type Change,
  type ChangeTarget,
  GROUP,
  type ObjectMeta,
  type Transaction,
} from '../api/v1alpha1/index.ts';

export interface ResolvedTarget {
  apiVersion: string;
  group: string;
  kind: string;
  name: string;
  /** Undefined for cluster-scoped targets. */
  namespace: string | undefined;
}

export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * Resolves a target's namespace: omitted means the Transaction's namespace for namespaced kinds,
 * and none for cluster-scoped kinds.
 */
export function resolveTarget(
  target: ChangeTarget,
  txnNamespace: string,
  namespaced: boolean,
): ResolvedTarget {
  return {
    apiVersion: target.apiVersion,
    group: groupOf(target.apiVersion),
    kind: target.kind,
    name: target.name,
    namespace: namespaced ? (target.namespace ?? txnNamespace) : undefined,
  };
}

/** Identity of a resource across API versions of one group. */
export function targetKey(t: ResolvedTarget): string {
  return `${t.group}/${t.kind}/${t.namespace ?? ''}/${t.name}`;
}

/** "ConfigMap default/app-config", "ClusterRole reader" — for messages. */
export function describeTarget(t: Pick<ResolvedTarget, 'kind' | 'name' | 'namespace'>): string {
  return `${t.kind} ${t.namespace ? `${t.namespace}/` : ''}${t.name}`;
}

/** Status form: "<apiVersion> <kind> <namespace>/<name>". */
export function statusTarget(t: ResolvedTarget): string {
  return `${t.apiVersion} ${describeTarget(t)}`;
}

/**
 * Finds changes that name the same resource once namespaces are defaulted and versions of one
 * group are treated as one (the CRD's CEL rule sees neither). Returns a message, or undefined.
 */
export function duplicateTargets(targets: readonly ResolvedTarget[]): string | undefined {
  const seen = new Map<string, number>();
  for (const [i, t] of targets.entries()) {
    const key = targetKey(t);
    const first = seen.get(key);
    if (first !== undefined) {
      return `changes ${first} and ${i} both target ${describeTarget(t)}; each resource may appear in one change only`;
    }
    seen.set(key, i);
  }
  return undefined;
}

/** The server-side-apply field manager of a transaction's Patch changes. */
export function fieldManager(txn: Pick<Transaction, 'metadata'>): string {
  return `janus-${txn.metadata.name}`;
}

/**
 * Every object a transaction writes carries this annotation. After a crash it tells our own
 * earlier write apart from someone else's, so a change is never applied twice nor mistaken for
 * a conflict; for users it names the transaction that last changed the object.
 */
export const ANNOTATION_APPLIED_BY = `${GROUP}/applied-by`;

export function appliedByValue(txn: Pick<Transaction, 'metadata'>, index: number): string {
  return `${txn.metadata.namespace}/${txn.metadata.name}@${txn.metadata.uid}#${index}`;
}

export function isAppliedBy(
  meta: ObjectMeta | undefined,
  txn: Pick<Transaction, 'metadata'>,
  index: number,
): boolean {
  return meta?.annotations?.[ANNOTATION_APPLIED_BY] === appliedByValue(txn, index);
}

/** The ServiceAccount user every target operation impersonates. */
export function serviceAccountUser(txn: Pick<Transaction, 'metadata' | 'spec'>): string {
  return `system:serviceaccount:${txn.metadata.namespace}:${txn.spec.serviceAccountName}`;
}

export function changeVerb(change: Change): string {
  return change.type.toLowerCase();
}

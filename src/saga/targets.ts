/** Pure helpers about a change's target: where it lives, how it is named, how we mark our writes. */
import { createHash } from 'node:crypto';
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

/** The API server refuses field managers longer than this. */
const MAX_FIELD_MANAGER = 128;

/**
 * The field manager of a transaction's writes: `janus:<name>@<uid>`. The uid makes it the
 * transaction's alone — two Transactions of the same name (in two namespaces, or one re-created
 * after a delete) never share one, so a Patch never drops fields another transaction applied.
 * A long name is shortened; the uid is kept whole. Without a uid it is `janus:<name>`; janus
 * plan, before the Transaction exists, gives a stand-in uid of real length instead
 * (changes/change-context.ts beforeCreation), so its dry runs send what the controller's will.
 */
export function fieldManager(txn: Pick<Transaction, 'metadata'>): string {
  const uid = txn.metadata.uid;
  if (!uid) return `janus:${txn.metadata.name}`.slice(0, MAX_FIELD_MANAGER);
  const room = MAX_FIELD_MANAGER - 'janus:'.length - 1 - uid.length;
  return `janus:${txn.metadata.name.slice(0, room)}@${uid}`;
}

const SOURCE_MANAGER_PREFIX = 'janus-source:';
/** Hex digits of the hash that keeps a shortened source manager unique. */
const SOURCE_MANAGER_HASH = 16;

/**
 * The field manager of a source's Apply changes: `janus-source:<namespace>/<name>`, the same for
 * every transaction of that source, so each commit's apply drops the fields the previous commit
 * applied and this one no longer does (as Flux's kustomize-controller does). A Source in a long
 * namespace may take it past the API server's 128 characters: then its name is cut and a hash of
 * the whole `<namespace>/<name>` appended, so two sources never share a manager.
 */
export function sourceFieldManager(namespace: string, name: string): string {
  const whole = `${SOURCE_MANAGER_PREFIX}${namespace}/${name}`;
  if (whole.length <= MAX_FIELD_MANAGER) return whole;
  const hash = createHash('sha256')
    .update(`${namespace}/${name}`)
    .digest('hex')
    .slice(0, SOURCE_MANAGER_HASH);
  const room = MAX_FIELD_MANAGER - SOURCE_MANAGER_PREFIX.length - namespace.length - 2 - SOURCE_MANAGER_HASH;
  return `${SOURCE_MANAGER_PREFIX}${namespace}/${name.slice(0, room)}~${hash}`;
}

/** The source manager of a transaction made from a source's commit (spec.sourceRef), if it is one. */
export function sourceManagerOf(txn: Pick<Transaction, 'metadata' | 'spec'>): string | undefined {
  const source = txn.spec.sourceRef;
  return source ? sourceFieldManager(txn.metadata.namespace ?? '', source.name) : undefined;
}

/** The field manager of Janus 0.1 (`janus-<name>`), shared by every transaction of that name. */
export function legacyFieldManager(txn: Pick<Transaction, 'metadata'>): string {
  return `janus-${txn.metadata.name}`;
}

/**
 * The manager that committed (or will commit) this transaction's writes, as recorded at prepare;
 * a transaction prepared by Janus 0.1 has none recorded and used the legacy name, which its
 * rollback must use too for the undo of a Patch to release exactly the fields it set.
 */
export function committedFieldManager(txn: Pick<Transaction, 'metadata' | 'status'>): string {
  return txn.status?.fieldManager ?? legacyFieldManager(txn);
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
export function serviceAccountUser(txn: {
  metadata: { namespace?: string | undefined };
  spec: { serviceAccountName: string };
}): string {
  return `system:serviceaccount:${txn.metadata.namespace}:${txn.spec.serviceAccountName}`;
}

export function changeVerb(change: Change): string {
  return change.type.toLowerCase();
}

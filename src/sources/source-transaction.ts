/**
 * A source's commit as its one Transaction (docs/sources.md, "What a commit does", step 4):
 * `<source>-<first 7 hex of the commit>` in the source's namespace, labelled with the source,
 * `spec.sourceRef` naming it (its Apply changes write under the source's field manager), the
 * source's ServiceAccount, timeout, lock timeout and health gate, and the provenance every
 * Transaction from Git carries (repository, revision, the source's file, Git-order sequence,
 * stamp), plus the render's digest and what it leaves in the cluster, for its record. Pure.
 */
import {
  ANNOTATION_SOURCE_LEFT,
  ANNOTATION_SOURCE_PATH,
  ANNOTATION_SOURCE_RENDER_DIGEST,
  ANNOTATION_SOURCE_REPOSITORY,
  ANNOTATION_SOURCE_REVISION,
  ANNOTATION_SOURCE_SEQUENCE,
  API_VERSION,
  type Change,
  KIND,
  LABEL_MANAGED_BY,
  LABEL_SOURCE,
  MANAGED_BY,
  type SourceSpec,
  type Transaction,
} from '../api/v1alpha1/index.ts';
import { withStamp } from '../gitops/provenance.ts';
import type { LeftInCluster } from './changes-for-render.ts';

/** Kubernetes' bound on a Transaction's name (a DNS label). */
const MAX_NAME = 63;
/** Hex digits of the commit in a name when 7 collide, as room allows. */
const MAX_HEX = 12;
/** Letters that are no hex digit: a name `<source>-<6 hex><letter>` is never a plain prefix of a commit. */
const NON_HEX = 'ghijklmnopqrstuvwxyz';

/**
 * The names a commit's transaction may take, in order: `<source>-<7 hex>` first; when that is
 * taken by another commit's (the same 7 hex), longer prefixes of the commit as far as the name's
 * 63 characters allow, then 6 hex and a letter that is no hex digit. Deterministic, so a restart
 * finds the one it created.
 */
export function transactionNames(source: string, commit: string): string[] {
  const names: string[] = [];
  for (let hex = 7; hex <= MAX_HEX && source.length + 1 + hex <= MAX_NAME; hex++)
    names.push(`${source}-${commit.slice(0, hex)}`);
  for (const letter of NON_HEX) names.push(`${source}-${commit.slice(0, 6)}${letter}`);
  return names;
}

/** Sentences of ANNOTATION_SOURCE_LEFT: the first ones, then how many more. */
export const MAX_LEFT_LISTED = 32;

/**
 * The value of ANNOTATION_SOURCE_LEFT: a JSON list of what is left and why (each object's
 * identity, its reason and the sentence its record shows), the first MAX_LEFT_LISTED, then a
 * sentence counting the rest.
 */
export function leftAnnotation(left: readonly LeftInCluster[]): string {
  const listed: Record<string, string>[] = left.slice(0, MAX_LEFT_LISTED).map((l) => ({
    apiVersion: l.entry.apiVersion,
    kind: l.entry.kind,
    ...(l.entry.namespace && { namespace: l.entry.namespace }),
    name: l.entry.name,
    reason: l.reason,
    message: l.message,
  }));
  if (left.length > listed.length) listed.push({ message: `… and ${left.length - listed.length} more` });
  return JSON.stringify(listed);
}

export interface SourceTransactionInput {
  source: { name: string; namespace: string; spec: SourceSpec };
  /** The transaction's name (one of transactionNames). */
  name: string;
  /** The source's file, repository-relative: its provenance path. */
  file: string;
  repository: string;
  branch: string;
  commit: string;
  sequence: number;
  changes: Change[];
  renderDigest: string;
  left: readonly LeftInCluster[];
  stampKey: string;
}

export function sourceTransaction(o: SourceTransactionInput): Transaction {
  const { spec } = o.source;
  const txn: Transaction = {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: {
      name: o.name,
      namespace: o.source.namespace,
      labels: { [LABEL_SOURCE]: o.source.name, [LABEL_MANAGED_BY]: MANAGED_BY },
      annotations: {
        [ANNOTATION_SOURCE_REPOSITORY]: o.repository,
        [ANNOTATION_SOURCE_REVISION]: `${o.branch}@sha1:${o.commit}`,
        [ANNOTATION_SOURCE_PATH]: o.file,
        [ANNOTATION_SOURCE_SEQUENCE]: String(o.sequence),
        [ANNOTATION_SOURCE_RENDER_DIGEST]: o.renderDigest,
        ...(o.left.length > 0 && { [ANNOTATION_SOURCE_LEFT]: leftAnnotation(o.left) }),
      },
    },
    spec: {
      serviceAccountName: spec.serviceAccountName,
      ...(spec.timeout !== undefined && { timeout: spec.timeout }),
      ...(spec.lockTimeout !== undefined && { lockTimeout: spec.lockTimeout }),
      ...(spec.health !== undefined && { health: spec.health }),
      sourceRef: { name: o.source.name },
      changes: o.changes,
    },
  };
  return withStamp(txn, o.stampKey);
}

/**
 * The bytes a Transaction may take as JSON when created: etcd stores at most 1.5 MiB per object,
 * and the status the controller adds (an item per change, conditions) needs room.
 */
export const MAX_TRANSACTION_BYTES = 1024 * 1024;

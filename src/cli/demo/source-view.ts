/**
 * What the sources story prints of a Source and of its transactions: the table `kubectl get jsrc`
 * shows (the CRD's printer columns, manifests/crd/sources.tx.janus.io.yaml), and what one
 * commit's transaction did to each object. Pure.
 */
import type { Source, Transaction } from '../../api/v1alpha1/index.ts';
import { ANNOTATION_SOURCE_REVISION } from '../../api/v1alpha1/index.ts';
import { ageOf, renderTable } from '../table.ts';

/** `kubectl get jsrc`: NAME, APPLIED, ATTEMPTED, OUTCOME, DRIFT, AGE; a missing value is empty, as kubectl prints it. */
export function sourceTable(sources: readonly Source[], nowMs: number): string {
  const cell = (value: string | number | undefined) => (value === undefined ? '' : String(value));
  return renderTable(
    ['NAME', 'APPLIED', 'ATTEMPTED', 'OUTCOME', 'DRIFT', 'AGE'],
    sources.map((s) => [
      s.metadata.name,
      cell(s.status?.lastApplied?.shortRevision),
      cell(s.status?.lastAttempted?.shortRevision),
      cell(s.status?.lastAttempted?.outcome),
      cell(s.status?.drift?.count),
      ageOf(s.metadata.creationTimestamp, nowMs),
    ]),
  );
}

/** The Transaction that applies `commit` of a source, if it exists yet. */
export function transactionOfCommit(txns: readonly Transaction[], commit: string): Transaction | undefined {
  return txns.find((t) => t.metadata.annotations?.[ANNOTATION_SOURCE_REVISION]?.endsWith(`@sha1:${commit}`));
}

/**
 * Each change of a source's transaction as what it did: "created ConfigMap web-config-2hkh99b569"
 * (an Apply of an object that did not exist), "updated Deployment web", "pruned ConfigMap …" (a
 * Delete), with ", undone" once a rollback has put it back.
 */
export function changeLines(txn: Transaction): string[] {
  return txn.spec.changes.map((change, i) => {
    const item = txn.status?.items?.[i];
    const did = change.type === 'Delete' ? 'pruned' : item?.resourceVersion ? 'updated' : 'created';
    const undone = item?.rolledBack ? ', undone' : '';
    return `${did} ${change.target.kind} ${change.target.name}${undone}`;
  });
}

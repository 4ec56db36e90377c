/**
 * What `janus history` says of a record beyond its commit: a source's drift correction
 * (`<source>-drift-<sequence>`, docs/sources.md "Drift") named as such, since its SOURCE column is
 * the commit whose render it put back, not a commit it applied. Pure.
 */
import type { HistoryEntry } from '../results/history.ts';
import { isCorrectionOf } from '../sources/drift-decision.ts';

/** Whether the record is of a drift correction: its transaction is a correction of the source its trailer names. */
export function isDriftCorrection(entry: Pick<HistoryEntry, 'transaction' | 'sourceName'>): boolean {
  if (!entry.sourceName) return false;
  const [namespace, source = ''] = entry.sourceName.split('/', 2);
  const [txnNamespace, name = ''] = entry.transaction.split('/', 2);
  return namespace === txnNamespace && isCorrectionOf(name, source);
}

/** The DETAIL cell: the subject's detail, after "drift correction" for a correction's record. */
export function historyDetail(entry: Pick<HistoryEntry, 'transaction' | 'sourceName' | 'detail'>): string {
  if (!isDriftCorrection(entry)) return entry.detail ?? '';
  return `drift correction${entry.detail ? `: ${entry.detail}` : ''}`;
}

/** An entry as `-o json|yaml` prints it: `driftCorrection: true` on a correction's record. */
export function historyDocumentEntry<T extends HistoryEntry>(entry: T): T & { driftCorrection?: true } {
  return isDriftCorrection(entry) ? { ...entry, driftCorrection: true } : entry;
}

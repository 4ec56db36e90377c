/**
 * Which finished Transactions to prune: the decision of the retention policy, pure. Pruning
 * deletes the Transaction; the garbage collector takes its rollback store with it. The results
 * branch stays the permanent record (janus history), and the Git side's exactly-once guarantee
 * never needed the Transaction: it reads the results branch.
 *
 * Never pruned: a transaction in flight; one a human must still act on (Failed with committed
 * changes not rolled back: janus recover, janus rollback); a Committed one inside its rollback
 * window; the newest `keepLast` finished per namespace; anything finished less than `minAge` ago;
 * one whose outcome is not yet on the results branch.
 */
import { ANNOTATION_SOURCE_REPOSITORY, isTerminal, type Transaction } from '../api/v1alpha1/index.ts';

export interface RetentionPolicy {
  /** Finished Transactions kept per namespace whatever their age, newest first. */
  keepLast: number;
  /** Anything finished less than this long ago is kept (ms). */
  minAgeMs: number;
  /** A Committed transaction stays, and can be rolled back by name, at least this long (ms). */
  rollbackWindowMs: number;
}

export const DEFAULT_RETENTION: RetentionPolicy = {
  keepLast: 10,
  minAgeMs: 60 * 60_000,
  rollbackWindowMs: 7 * 24 * 60 * 60_000,
};

export type RetentionVerdict =
  | { prune: true }
  | {
      prune: false;
      why: 'in-flight' | 'needs-a-human' | 'rollback-window' | 'keep-last' | 'young' | 'not-recorded';
    };

/** Materialized from a Git repository: its outcome belongs on that repository's results branch. */
export function fromGit(txn: Transaction): boolean {
  return txn.metadata.annotations?.[ANNOTATION_SOURCE_REPOSITORY] !== undefined;
}

/** Committed changes a Failed transaction left standing: someone must recover or roll them back. */
export function needsAHuman(txn: Transaction): boolean {
  return txn.status?.phase === 'Failed' && (txn.status.items ?? []).some((i) => i.committed && !i.rolledBack);
}

/** When it finished: status.completedAt, or undefined while in flight. */
export function finishedAt(txn: Transaction): number | undefined {
  if (!isTerminal(txn.status?.phase)) return undefined;
  const at = Date.parse(txn.status?.completedAt ?? '');
  return Number.isNaN(at) ? undefined : at;
}

/**
 * The verdict for each Transaction (same order). `isRecorded` says whether its outcome is on
 * the results branch; always true without a Git side.
 */
export function retentionVerdicts(
  transactions: readonly Transaction[],
  policy: RetentionPolicy,
  now: number,
  isRecorded: (txn: Transaction) => boolean,
): RetentionVerdict[] {
  const newest = newestPerNamespace(transactions, policy.keepLast);
  return transactions.map((txn): RetentionVerdict => {
    const at = finishedAt(txn);
    if (at === undefined || txn.metadata.deletionTimestamp) return { prune: false, why: 'in-flight' };
    if (needsAHuman(txn)) return { prune: false, why: 'needs-a-human' };
    if (newest.has(txn)) return { prune: false, why: 'keep-last' };
    if (now - at < policy.minAgeMs) return { prune: false, why: 'young' };
    if (txn.status?.phase === 'Committed' && now - at < policy.rollbackWindowMs)
      return { prune: false, why: 'rollback-window' };
    if (!isRecorded(txn)) return { prune: false, why: 'not-recorded' };
    return { prune: true };
  });
}

/** The `keep` most recently finished Transactions of each namespace. */
function newestPerNamespace(transactions: readonly Transaction[], keep: number): Set<Transaction> {
  const byNamespace = new Map<string, Array<[number, Transaction]>>();
  for (const txn of transactions) {
    const at = finishedAt(txn);
    if (at === undefined) continue;
    const ns = txn.metadata.namespace ?? '';
    const list = byNamespace.get(ns) ?? [];
    list.push([at, txn]);
    byNamespace.set(ns, list);
  }
  const kept = new Set<Transaction>();
  for (const list of byNamespace.values()) {
    list.sort((a, b) => b[0] - a[0]);
    for (const [, txn] of list.slice(0, keep)) kept.add(txn);
  }
  return kept;
}

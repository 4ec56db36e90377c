/**
 * Where commit statuses meet the transaction-outcome stream: a TransactionListener the results
 * reporter calls from its handlers on the Transaction cache (every phase of every Transaction of
 * this repository), and the rejection records the materializer writes for directories that never
 * became one.
 */
import { parse } from 'yaml';
import type { Transaction } from '../api/v1alpha1/index.ts';
import { PHASE_REJECTED } from '../results/render-directory.ts';
import type { TransactionListener } from '../results/reporter.ts';
import { sourceCommit } from '../results/result-context.ts';
import type { ResultRecord } from '../results/result-record.ts';
import type { CommitStatusReporter } from './reporter.ts';
import { type StatusTemplate, statusOfRejection, statusOfTransaction } from './state.ts';

/**
 * Transactions that finished longer ago than this get no status when a term starts: a restart
 * does not read the statuses of every old Transaction retention kept (one read each).
 */
export const STATUS_MAX_AGE_MS = 24 * 60 * 60_000;

export function commitStatusListener(
  reporter: Pick<CommitStatusReporter, 'offer' | 'forget'>,
  template: StatusTemplate,
  now: () => number = Date.now,
): TransactionListener {
  return {
    observe(txn: Transaction, key: string) {
      const completed = Date.parse(txn.status?.completedAt ?? '');
      if (!Number.isNaN(completed) && now() - completed > STATUS_MAX_AGE_MS) return;
      reporter.offer(key, statusOfTransaction(txn, template));
    },
    forget: (key) => reporter.forget(key),
  };
}

/** The failure status of a rejected directory, from its result record; undefined for any other record. */
export function rejectionStatusOf(record: ResultRecord, template: StatusTemplate) {
  for (const text of Object.values(record.files)) {
    const doc = parseQuietly(text);
    if (doc?.phase !== PHASE_REJECTED) continue;
    const commit = sourceCommit(doc.source?.revision);
    const namespace = doc.transaction?.namespace;
    const name = doc.transaction?.name;
    if (!commit || !namespace || !name) continue;
    const errors = Array.isArray(doc.errors) ? doc.errors : [];
    const first = errors[0] as { file?: string; line?: number; message?: string } | undefined;
    const where = first?.file ? `${first.file}${first.line !== undefined ? `:${first.line}` : ''}: ` : '';
    return {
      // Per commit: a directory rejected at one commit may become a Transaction at the next.
      key: `${namespace}/${name}@${commit}`,
      status: statusOfRejection(
        { namespace, name, commit, path: doc.source?.path },
        first ? `${where}${first.message ?? ''}` : (doc.message ?? undefined),
        errors.length,
        template,
      ),
    };
  }
  return undefined;
}

interface ResultDocument {
  phase?: string;
  message?: string;
  transaction?: { namespace?: string; name?: string };
  source?: { revision?: string; path?: string };
  errors?: unknown;
}

function parseQuietly(text: string): ResultDocument | undefined {
  try {
    return parse(text) as ResultDocument;
  } catch {
    return undefined;
  }
}

/**
 * Where commit statuses meet the transaction-outcome stream: a TransactionListener the results
 * reporter calls from its handlers on the Transaction cache (every phase of every Transaction of
 * this repository), and the rejection records the materializer writes for directories that never
 * became one.
 */
import { parse } from 'yaml';
import type { Transaction } from '../api/v1alpha1/index.ts';
import type { TransactionListener } from '../results/reporter.ts';
import { sourceCommit } from '../results/result-context.ts';
import type { ResultRecord } from '../results/result-record.ts';
import type { CommitStatusReporter } from './reporter.ts';
import {
  RECORD_PHASES,
  type RecordPhase,
  type StatusTemplate,
  statusOfRejection,
  statusOfTransaction,
} from './state.ts';

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

/**
 * The status of a commit that became no Transaction, from its result record (a rejected directory
 * or source declaration, a source's failed, refused or superseded commit); undefined for any other.
 */
export function rejectionStatusOf(record: ResultRecord, template: StatusTemplate) {
  for (const text of Object.values(record.files)) {
    const doc = parseQuietly(text);
    const phase = doc?.phase;
    if (!doc || !(RECORD_PHASES as readonly unknown[]).includes(phase)) continue;
    const commit = sourceCommit(doc.source?.revision);
    const namespace = doc.transaction?.namespace;
    const name = doc.transaction?.name;
    if (!commit || !namespace || !name) continue;
    const errors = Array.isArray(doc.errors) ? doc.errors : [];
    const first = errors[0] as { file?: string; line?: number; message?: string } | undefined;
    const where = first?.file ? `${first.file}${first.line !== undefined ? `:${first.line}` : ''}: ` : '';
    // A source's commits show under the source's context (src/sources/source-records.ts).
    const shownAs = typeof doc.render?.source === 'string' ? doc.render.source : name;
    return {
      // Per commit: a directory rejected at one commit may become a Transaction at the next.
      key: `${namespace}/${name}@${commit}`,
      status: statusOfRejection(
        { namespace, name: shownAs, commit, path: doc.source?.path },
        typeof doc.supersededBy === 'string'
          ? `${doc.supersededBy.slice(0, 7)} was applied instead, with its changes`
          : first
            ? `${where}${first.message ?? ''}`
            : (doc.message ?? undefined),
        errors.length,
        template,
        phase as RecordPhase,
      ),
    };
  }
  return undefined;
}

interface ResultDocument {
  phase?: string;
  render?: { source?: unknown };
  supersededBy?: unknown;
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

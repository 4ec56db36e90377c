/**
 * The Git side's hook for sources (src/sources/, docs/sources.md): a step each poll runs after the
 * materializer's, at the commit it reached. Declared here and built by the manager, so gitops
 * never imports sources (which builds on gitops' policy, provenance and results).
 */
import type { Transaction } from '../api/v1alpha1/index.ts';
import type { Objects } from '../kube/resources.ts';
import type { Logger } from '../log/index.ts';
import type { TransactionApi } from './cluster-transactions.ts';
import type { ResultSink } from './materializer.ts';

/** What one poll did for the sources. */
export interface SourcePoll {
  sources: number;
  transactions: number;
  waiting: number;
  renderFailed: number;
  refused: number;
  rejected: number;
  deleted: number;
}

export interface SourceStep {
  /** One step for every source at `at`, the commit the poll reached. */
  poll(at: string): Promise<SourcePoll>;
  /** Whether a source's transaction has its outcome in its Source's status (retention waits for it). */
  isSettled(txn: Transaction): boolean;
  /** Whether a Source waits for `txn` to end: its end is worth a poll at once. */
  awaits(txn: Transaction): boolean;
  /** Ends the term: renders in flight are killed. */
  stop(): void;
}

/** What the Git side hands the sources step for one term. */
export interface SourceStepContext {
  /** The controller identity, discovery seeded. */
  objects: Objects;
  /** Creates a Transaction, adopting one of its name that Janus stamped. */
  transactions: TransactionApi;
  /** The results branch, as the materializer writes it (commit statuses, notifications). */
  results: ResultSink;
  /** A Transaction as the reporter's informer has it (slim: no change contents). */
  cachedTransaction(namespace: string, name: string): Transaction | undefined;
  /** Queues the Pending record of a Transaction just created. */
  recordMaterialized(txn: Transaction): Promise<void>;
  /** The Git cursor's next sequence and stamp key (the materializer's). */
  cursor: { reserveSequence(): Promise<{ sequence: number; stampKey: string }>; stampKey(): Promise<string> };
  log: Logger;
}

/**
 * Finished Transactions are kept in the informer cache in a compact form: what decide() reads
 * (metadata, phase, per-change flags, recovery schedule), not their changes and conditions.
 * A cluster holds far more finished transactions than running ones; this keeps the controller's
 * memory flat as they accumulate. One that needs action again is read in full first.
 */
import type { Transaction } from '../api/v1alpha1/index.ts';
import { isTerminal } from '../saga/status.ts';

const compacted = new WeakSet<Transaction>();

export function compactIfFinished(txn: Transaction): Transaction {
  const status = txn.status;
  if (!isTerminal(status?.phase) || txn.metadata.deletionTimestamp) return txn;
  const { managedFields: _managed, ...metadata } = txn.metadata;
  const compact: Transaction = {
    apiVersion: txn.apiVersion,
    kind: txn.kind,
    metadata,
    spec: { serviceAccountName: txn.spec.serviceAccountName, changes: [] },
    status: {
      ...(status?.phase && { phase: status.phase }),
      ...(status?.completedAt && { completedAt: status.completedAt }), // retention reads it
      ...(status?.recoveryAttempts !== undefined && { recoveryAttempts: status.recoveryAttempts }),
      ...(status?.nextRecoveryAt && { nextRecoveryAt: status.nextRecoveryAt }),
      items: (status?.items ?? []).map((i) => ({
        ...(i.committed && { committed: true }),
        ...(i.rolledBack && { rolledBack: true }),
        ...(i.conflict && { conflict: true }),
      })),
    },
  };
  compacted.add(compact);
  return compact;
}

export function isCompact(txn: Transaction): boolean {
  return compacted.has(txn);
}

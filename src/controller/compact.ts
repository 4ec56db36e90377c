/**
 * Finished Transactions are kept in the informer cache in a compact form: what decide() reads
 * (metadata, phase, per-change flags, recovery schedule), not their changes and conditions.
 * A cluster holds far more finished transactions than running ones; this keeps the controller's
 * memory flat as they accumulate. One that needs action again is read in full first.
 */
import { isTerminal, type Transaction } from '../api/v1alpha1/index.ts';

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

/**
 * The most bytes of change content (manifests, patches) an unfinished Transaction keeps in the
 * cache. A Transaction can be ~1.5 MiB (etcd's limit); a tenant with 300 of them in flight would
 * have the controller hold ~450 MB. Above this, the cache keeps the Transaction without its
 * contents (targets, types, status stay: Git order and locks read them), and the controller
 * reads it in full when it acts on it, as for a finished one. Typical transactions stay whole.
 */
export const MAX_CACHED_CONTENT_BYTES = 64 * 1024;

const slimmed = new WeakSet<Transaction>();

/** What the informer caches of `txn`: compact when finished, without contents when they are large. */
export function compactForCache(txn: Transaction): Transaction {
  const finished = compactIfFinished(txn);
  if (finished !== txn) return finished;
  if (contentBytes(txn) <= MAX_CACHED_CONTENT_BYTES) return txn;
  const changes = txn.spec.changes.map(({ content: _content, sopsContent: _sops, ...change }) => change);
  const slim: Transaction = { ...txn, spec: { ...txn.spec, changes } };
  slimmed.add(slim);
  return slim;
}

/** Cached without its changes' contents: read it in full before reconciling. */
export function isWithoutContent(txn: Transaction): boolean {
  return slimmed.has(txn);
}

function contentBytes(txn: Transaction): number {
  let bytes = 0;
  for (const change of txn.spec.changes) {
    if (change.content !== undefined) bytes += JSON.stringify(change.content).length;
    if (change.sopsContent !== undefined) bytes += change.sopsContent.length;
    if (bytes > MAX_CACHED_CONTENT_BYTES) break;
  }
  return bytes;
}

/**
 * LIST page size of the Transaction informers (the controller's and the results reporter's): a
 * page is read and parsed whole, and 10 Transactions of ~1.5 MiB is ~15 MiB where the informer's
 * default of 500 could be 750 MiB.
 */
export const TRANSACTION_PAGE_SIZE = 10;

/**
 * The one cache of Transactions in a Janus process, as controller-runtime's manager has one
 * informer per kind: the saga controller, the results reporter and the notifier register handlers
 * on it and read it, so Transactions are listed once, watched once and held once. The manager
 * owns it (src/manager/manager.ts). It holds this installation's Transactions only
 * (installation.ts): the selector is in its LIST and WATCH.
 *
 * What it keeps of a Transaction is one trimming (cachedForm), what every consumer needs and no
 * more; whoever needs more reads the Transaction in full when it acts on it:
 *
 * - never managedFields;
 * - a finished one (Committed, RolledBack, Failed; not being deleted) compact: what decide()
 *   reads (metadata, phase, per-change flags, recovery schedule), what retention reads
 *   (completedAt), and its outcome as the results branch's fingerprint, the notification and the
 *   commit status read it (each change's type, target, flags and error; the source; the condition
 *   that says most). Not the contents, the other conditions, the health gate's record or the
 *   per-change bookkeeping. A cluster holds far more finished transactions than running ones: this
 *   keeps memory flat as they accumulate. The controller reads one in full when decide() has
 *   something to do with it; the results reporter when it writes its record.
 * - an unfinished one whole, unless its contents are large (MAX_CACHED_CONTENT_BYTES): then
 *   without them, and the controller reads it in full before reconciling it.
 */
import { type ItemStatus, isTerminal, type Transaction } from '../api/v1alpha1/index.ts';
import type { KubeClient } from '../kube/client.ts';
import { isNotFound } from '../kube/errors.ts';
import { Transactions, transactionsPath } from '../kube/transactions.ts';
import type { Logger } from '../log/index.ts';
import { Informer } from '../runtime/informer.ts';
import { dropManagedFields } from '../runtime/watch-stream.ts';
import { summaryCondition } from '../saga/status.ts';
import { transactionSelector } from './installation.ts';

/** What consumers do with the cache: read it and follow it. Starting and stopping it is the manager's. */
export type TransactionCache = Pick<
  Informer<Transaction>,
  'get' | 'list' | 'hasSynced' | 'waitForSync' | 'addHandlers'
>;

/**
 * LIST page size of the Transaction cache: a page is read and parsed whole, and 10 Transactions
 * of ~1.5 MiB is ~15 MiB where the informer's default of 500 could be 750 MiB.
 */
export const TRANSACTION_PAGE_SIZE = 10;

/** The informer of this installation's Transactions (in `watchNamespace`, or all), not yet started. */
export function transactionInformer(o: {
  client: KubeClient;
  watchNamespace: string | undefined;
  instance: string | undefined;
  log: Logger;
}): Informer<Transaction> {
  return new Informer<Transaction>({
    client: o.client,
    path: transactionsPath(o.watchNamespace),
    // Server-side: another installation's Transactions never reach this one.
    labelSelector: transactionSelector(o.instance),
    transform: cachedForm,
    pageSize: TRANSACTION_PAGE_SIZE,
    logger: o.log.child({ component: 'transaction-cache' }),
  });
}

const compacted = new WeakSet<Transaction>();
const withoutContent = new WeakSet<Transaction>();

/** What the cache keeps of `txn` (see the top of this file). */
export function cachedForm(txn: Transaction): Transaction {
  const plain = dropManagedFields(txn);
  if (isTerminal(plain.status?.phase) && !plain.metadata.deletionTimestamp) return compact(plain);
  if (contentBytes(plain) <= MAX_CACHED_CONTENT_BYTES) return plain;
  const changes = plain.spec.changes.map(({ content: _content, sopsContent: _sops, ...change }) => change);
  const slim: Transaction = { ...plain, spec: { ...plain.spec, changes } };
  withoutContent.add(slim);
  return slim;
}

function compact(txn: Transaction): Transaction {
  const status = txn.status ?? {};
  const summary = summaryCondition(status.conditions ?? []);
  const form: Transaction = {
    apiVersion: txn.apiVersion,
    kind: txn.kind,
    metadata: txn.metadata,
    spec: {
      serviceAccountName: txn.spec.serviceAccountName,
      // The source whose commit it applied: sources/ find their transactions by it.
      ...(txn.spec.sourceRef && { sourceRef: txn.spec.sourceRef }),
      changes: txn.spec.changes.map(({ type, target }) => ({ type, target })),
    },
    status: {
      ...(status.phase && { phase: status.phase }),
      ...(status.completedAt && { completedAt: status.completedAt }),
      ...(status.recoveryAttempts !== undefined && { recoveryAttempts: status.recoveryAttempts }),
      ...(status.nextRecoveryAt && { nextRecoveryAt: status.nextRecoveryAt }),
      ...(status.source && { source: status.source }),
      items: (status.items ?? []).map(itemOutcome),
      ...(summary && { conditions: [summary] }),
    },
  };
  compacted.add(form);
  return form;
}

/** What a change came to: the flags decide() and the outcome read, and its error. */
function itemOutcome(item: ItemStatus): ItemStatus {
  return {
    ...(item.prepared && { prepared: true }),
    ...(item.committed && { committed: true }),
    ...(item.rolledBack && { rolledBack: true }),
    ...(item.conflict && { conflict: true }),
    ...(item.error && { error: item.error }),
  };
}

/** Cached compact (finished): its contents, conditions and health record are not there. */
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

/** Cached without its changes' contents: read it in full before reconciling. */
export function isWithoutContent(txn: Transaction): boolean {
  return withoutContent.has(txn);
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

/** The Transaction a cached one stands for, read in full; undefined once it is gone. */
export async function readInFull(client: KubeClient, cached: Transaction): Promise<Transaction | undefined> {
  try {
    return await new Transactions(client).get(cached.metadata.namespace ?? '', cached.metadata.name);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

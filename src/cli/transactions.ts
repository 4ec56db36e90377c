/**
 * Reading, watching and annotating Transactions, as the person running the CLI: the Transaction
 * client (kube/transactions.ts) with the CLI's retries and its wording of what was not found.
 */
import { API_VERSION, type Transaction } from '../api/v1alpha1/index.ts';
import { type KubeClient, PatchType, type WatchEvent } from '../kube/client.ts';
import { isConflict, isGone, isNotFound } from '../kube/errors.ts';
import type { ObjectList } from '../kube/resources.ts';
import { Transactions } from '../kube/transactions.ts';
import { compareCodeUnits } from '../text/order.ts';
import { UsageError } from './command.ts';
import { isWorthRetrying, RETRY_DELAY_MS, retryUntilAborted, sleep, withRetries } from './retry.ts';

/** The Transaction, or a usage error (exit 2) naming what was not found. */
export async function getTransaction(
  client: KubeClient,
  namespace: string,
  name: string,
): Promise<Transaction> {
  try {
    return await withRetries(() => new Transactions(client).get(namespace, name));
  } catch (e) {
    if (isNotFound(e) && e.details?.name) {
      throw new UsageError(
        `Transaction ${namespace}/${name} not found. If it finished a while ago, the retention policy may have pruned it: its record stays on the results branch (janus history ${namespace}/${name})`,
      );
    }
    throw missingCrd(e);
  }
}

/** A 404 without a name means the API server does not serve Transactions at all. */
function missingCrd(e: unknown): unknown {
  if (!isNotFound(e) || e.details?.name) return e;
  return new UsageError(
    `this cluster does not serve ${API_VERSION} Transactions: install the CRD (kubectl apply -f manifests/crd/)`,
    1,
  );
}

export async function listTransactions(
  client: KubeClient,
  namespace: string | undefined,
  query: Record<string, string> = {},
): Promise<ObjectList<Transaction>> {
  try {
    return await withRetries(() => new Transactions(client).list(namespace, query));
  } catch (e) {
    throw missingCrd(e);
  }
}

/**
 * Sets an annotation if `decide` (given the freshest Transaction) says so. The patch carries the
 * resourceVersion `decide` looked at, so the decision is never applied to a state it did not see;
 * on a conflict (the controller wrote meanwhile) it reads again and decides again.
 */
export async function annotateIf<R>(
  client: KubeClient,
  namespace: string,
  name: string,
  decide: (txn: Transaction) => { annotate?: Record<string, string> | undefined; result: R },
): Promise<{ txn: Transaction; result: R }> {
  for (let attempt = 1; ; attempt++) {
    const txn = await getTransaction(client, namespace, name);
    const { annotate, result } = decide(txn);
    if (!annotate) return { txn, result };
    try {
      const updated = await new Transactions(client).patch(
        { namespace, name },
        { metadata: { resourceVersion: txn.metadata.resourceVersion, annotations: annotate } },
        PatchType.merge,
      );
      return { txn: updated, result };
    } catch (e) {
      if (!isConflict(e) || attempt >= 5) throw e;
    }
  }
}

export interface WatchScope {
  /** Undefined: every namespace. */
  namespace: string | undefined;
  /** Only this Transaction. */
  name?: string | undefined;
}

/** The Transactions in scope as last listed or watched, by namespace/name. */
class TransactionCache {
  readonly #byKey = new Map<string, Transaction>();
  resourceVersion: string | undefined;

  reset(list: ObjectList<Transaction>): void {
    this.#byKey.clear();
    for (const t of list.items) this.#byKey.set(keyOf(t), t);
    this.resourceVersion = list.metadata.resourceVersion;
  }

  /** Applies a watch event; false for bookmarks, which change nothing visible. */
  apply(event: WatchEvent<Transaction>): boolean {
    this.resourceVersion = event.object.metadata.resourceVersion ?? this.resourceVersion;
    if (event.type === 'BOOKMARK') return false;
    if (event.type === 'DELETED') this.#byKey.delete(keyOf(event.object));
    else this.#byKey.set(keyOf(event.object), event.object);
    return true;
  }

  snapshot(): Transaction[] {
    return [...this.#byKey].sort(([a], [b]) => compareCodeUnits(a, b)).map(([, txn]) => txn);
  }
}

const keyOf = (t: Transaction) => `${t.metadata.namespace}/${t.metadata.name}`;

/**
 * The Transactions in scope, first as listed, then again after every change a watch reports,
 * sorted by namespace and name. Lists again when the watch expires (410 Gone), retries what
 * passes by itself (429, 5xx, the network); ends when `signal` aborts.
 */
export async function* observeTransactions(
  client: KubeClient,
  scope: WatchScope,
  signal: AbortSignal,
): AsyncGenerator<Transaction[]> {
  const query: Record<string, string> = scope.name ? { fieldSelector: `metadata.name=${scope.name}` } : {};
  const cache = new TransactionCache();
  while (!signal.aborted) {
    if (cache.resourceVersion === undefined) {
      const list = await retryUntilAborted(() => listTransactions(client, scope.namespace, query), signal);
      if (!list) return;
      cache.reset(list);
      yield cache.snapshot();
    }
    try {
      yield* watchChanges(client, scope, query, cache, signal);
    } catch (e) {
      if (signal.aborted) return;
      if (isGone(e)) cache.resourceVersion = undefined;
      else if (isWorthRetrying(e)) await sleep(RETRY_DELAY_MS, signal);
      else throw e;
    }
  }
}

/** One watch from the cache's resourceVersion: a snapshot per change, until the server ends it. */
async function* watchChanges(
  client: KubeClient,
  scope: WatchScope,
  query: Record<string, string>,
  cache: TransactionCache,
  signal: AbortSignal,
): AsyncGenerator<Transaction[]> {
  const watchQuery = {
    ...query,
    resourceVersion: cache.resourceVersion,
    allowWatchBookmarks: true,
    timeoutSeconds: 300,
  };
  for await (const event of new Transactions(client).watch(scope.namespace, watchQuery, signal)) {
    if (event.type === 'ERROR') {
      cache.resourceVersion = undefined; // expired: list again
      return;
    }
    if (cache.apply(event)) yield cache.snapshot();
  }
}

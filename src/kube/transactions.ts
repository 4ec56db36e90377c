/**
 * The Transaction API (tx.janus.io/v1alpha1 transactions): its resource mapping, its paths, and
 * the requests on it, for every caller (the controller, the results reporter, the Git side, the
 * CLI). One request each, like KubeClient: retries and error wording are the caller's.
 */
import { GROUP, KIND, PLURAL, type Transaction, VERSION } from '../api/v1alpha1/index.ts';
import type { KubeClient, PatchContentType, Query, WatchEvent } from './client.ts';
import { collectionPath, type ObjectList, objectPath, type ResourceMapping } from './resources.ts';

/** The Transaction mapping, seeded into discovery so that no request is spent discovering it. */
export const TRANSACTION_MAPPING: ResourceMapping = {
  group: GROUP,
  version: VERSION,
  kind: KIND,
  resource: PLURAL,
  namespaced: true,
};

/** The collection (in `namespace`, or in all namespaces when undefined), or one Transaction or its status. */
export function transactionsPath(namespace: string | undefined, name?: string, sub?: 'status'): string {
  return name === undefined
    ? collectionPath(TRANSACTION_MAPPING, namespace)
    : objectPath(TRANSACTION_MAPPING, namespace, name, sub);
}

/** A Transaction by namespace and name: what a patch addresses. */
export interface TransactionName {
  namespace: string;
  name: string;
}

export class Transactions {
  readonly #client: KubeClient;

  constructor(client: KubeClient) {
    this.#client = client;
  }

  get(namespace: string, name: string): Promise<Transaction> {
    return this.#client.request<Transaction>({ method: 'GET', path: transactionsPath(namespace, name) });
  }

  list(namespace: string | undefined, query: Query = {}): Promise<ObjectList<Transaction>> {
    return this.#client.request<ObjectList<Transaction>>({
      method: 'GET',
      path: transactionsPath(namespace),
      query,
    });
  }

  watch(
    namespace: string | undefined,
    query: Query,
    signal: AbortSignal,
  ): AsyncGenerator<WatchEvent<Transaction>> {
    return this.#client.watch<Transaction>(transactionsPath(namespace), query, signal);
  }

  /** Patches metadata (annotations, finalizers): the spec is immutable. */
  patch(txn: TransactionName, body: unknown, contentType: PatchContentType): Promise<Transaction> {
    return this.#client.request<Transaction>({
      method: 'PATCH',
      path: transactionsPath(txn.namespace, txn.name),
      contentType,
      body,
    });
  }

  /** Patches the status subresource: only the controller writes it. */
  patchStatus(txn: TransactionName, body: unknown, contentType: PatchContentType): Promise<Transaction> {
    return this.#client.request<Transaction>({
      method: 'PATCH',
      path: transactionsPath(txn.namespace, txn.name, 'status'),
      contentType,
      body,
    });
  }
}

/** The namespace and name of a Transaction as read from the API server. */
export function nameOf(txn: Transaction): TransactionName {
  return { namespace: txn.metadata.namespace ?? '', name: txn.metadata.name };
}

/**
 * The Transactions the open pages show, listed and then watched with the user's own credentials
 * (runtime/informer.ts): one informer per scope (every namespace, or one), shared by every page
 * on that scope, started by the first and stopped a while after the last has gone (a reload
 * finds it still warm). What the API server refuses (a user who may not list that scope) is told
 * to the pages in its words; the informer keeps trying, so a right granted later shows up.
 */
import type { Transaction } from '../api/v1alpha1/index.ts';
import { transactionsPath } from '../kube/transactions.ts';
import { errorText } from '../log/describe-error.ts';
import { Informer, type ListWatchClient } from '../runtime/informer.ts';
import { dropManagedFields } from '../runtime/watch-stream.ts';

export interface FeedListener {
  /** Every Transaction in scope, once listed; changes follow one by one (a relist's too). */
  snapshot(txns: Transaction[]): void;
  upsert(txn: Transaction): void;
  remove(txn: Transaction): void;
  /** Why the scope cannot be listed (the API server's message). */
  problem(message: string): void;
}

/** '' is every namespace. */
export type Scope = string;

class Feed {
  readonly informer: Informer<Transaction>;
  readonly listeners = new Set<FeedListener>();
  synced = false;
  problem: string | undefined;
  stopTimer: NodeJS.Timeout | undefined;

  constructor(client: ListWatchClient, scope: Scope) {
    this.informer = new Informer<Transaction>({
      client,
      path: transactionsPath(scope || undefined),
      transform: dropManagedFields,
      // The page shows what changes; an unchanged copy every few minutes would only redraw.
      resyncPeriodMs: 0,
      handlers: {
        onAdd: (txn) => this.#each((l) => l.upsert(txn)),
        onUpdate: (_old, txn) => this.#each((l) => l.upsert(txn)),
        onDelete: (txn) => this.#each((l) => l.remove(txn)),
      },
      onListError: (e) => {
        this.problem = errorText(e);
        for (const l of this.listeners) l.problem(this.problem);
      },
    });
    this.informer.waitForSync().then((synced) => {
      if (!synced) return;
      this.synced = true;
      this.problem = undefined;
      const all = this.informer.list();
      for (const l of this.listeners) l.snapshot(all);
    });
    this.informer.start();
  }

  #each(fn: (l: FeedListener) => void): void {
    if (this.synced) for (const l of this.listeners) fn(l);
  }
}

export class TransactionFeeds {
  readonly #client: ListWatchClient;
  readonly #lingerMs: number;
  readonly #feeds = new Map<Scope, Feed>();

  constructor(client: ListWatchClient, opts: { lingerMs?: number } = {}) {
    this.#client = client;
    this.#lingerMs = opts.lingerMs ?? 60_000;
  }

  /** Starts the scope's informer ahead of the first page, so that page finds it listed. */
  warm(scope: Scope): void {
    this.#feed(scope);
  }

  /** Hears the scope's Transactions until the returned function is called. */
  subscribe(scope: Scope, listener: FeedListener): () => void {
    const feed = this.#feed(scope);
    clearTimeout(feed.stopTimer);
    feed.listeners.add(listener);
    if (feed.synced) listener.snapshot(feed.informer.list());
    else if (feed.problem) listener.problem(feed.problem);
    return () => {
      feed.listeners.delete(listener);
      if (feed.listeners.size === 0) {
        feed.stopTimer = setTimeout(() => this.#drop(scope, feed), this.#lingerMs);
        feed.stopTimer.unref();
      }
    };
  }

  /**
   * The scope that already holds `namespace`'s Transactions: every namespace when that one is
   * listed, else the namespace itself.
   */
  scopeOf(namespace: string): Scope {
    const all = this.#feeds.get('');
    return all?.synced ? '' : namespace;
  }

  async close(): Promise<void> {
    const feeds = [...this.#feeds.values()];
    this.#feeds.clear();
    for (const feed of feeds) clearTimeout(feed.stopTimer);
    await Promise.all(feeds.map((f) => f.informer.stop()));
  }

  #feed(scope: Scope): Feed {
    let feed = this.#feeds.get(scope);
    if (!feed) {
      feed = new Feed(this.#client, scope);
      this.#feeds.set(scope, feed);
    }
    return feed;
  }

  #drop(scope: Scope, feed: Feed): void {
    if (feed.listeners.size > 0 || this.#feeds.get(scope) !== feed) return;
    this.#feeds.delete(scope);
    void feed.informer.stop();
  }
}

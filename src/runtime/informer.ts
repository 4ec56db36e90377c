/**
 * A list+watch cache of one resource collection, with client-go's reflector semantics and none of
 * client-node's informer defects: handlers cannot break the loop, reconnects back off, streams
 * are bounded by the server and by a stall timer, and a 410 relists and reports what vanished.
 *
 *   LIST (paged) ──► WATCH from its resourceVersion ──► stream ends ──► WATCH from the last seen
 *         ▲                                                  │          resourceVersion
 *         └────────────── 410 Gone (HTTP or ERROR event) ────┘
 */
import type { KubeClient, Query, WatchEvent } from '../kube/client.ts';
import type { KubeObject, ObjectList } from '../kube/resources.ts';
import { type Logger, silentLogger } from '../log/index.ts';
import { type BackoffPolicy, backoffDelay, jitterUp, type Random } from './backoff.ts';
import { guardHooks } from './guard-hooks.ts';
import { type CacheChange, isNewer, ObjectCache, objectKey } from './object-cache.ts';
import { sleep } from './sleep.ts';
import { type StreamEnd, type WatchEndReason, watchOnce } from './watch-stream.ts';

/** What the informer needs of a KubeClient; tests may wrap one to cut or age its watches. */
export type ListWatchClient = Pick<KubeClient, 'request' | 'watch'>;

/**
 * Synchronous callbacks: they should only enqueue keys. A throw (or a rejected promise from an
 * async callback) is logged and never stops the informer.
 */
export interface InformerHandlers<T> {
  onAdd?(obj: T, key: string): void;
  /** Also called with old === obj for every cached object at each resync. */
  onUpdate?(old: T, obj: T, key: string): void;
  /** `obj` is the last known state; after a relist it may predate the actual deletion. */
  onDelete?(obj: T, key: string): void;
}

/** Counters for metrics; the caller binds them to its registry and labels. */
export interface InformerMetrics {
  list?(): void;
  watchRestart?(reason: WatchEndReason): void;
  event?(type: WatchEvent['type']): void;
}

export interface InformerOptions<T extends KubeObject> {
  client: ListWatchClient;
  /** Collection path, e.g. `/apis/tx.janus.io/v1alpha1/transactions` or a namespaced one. */
  path: string;
  labelSelector?: string | undefined;
  fieldSelector?: string | undefined;
  /** The first handlers; more with addHandlers(). */
  handlers?: InformerHandlers<T> | undefined;
  /** Applied before caching, e.g. dropManagedFields, to keep memory down. */
  transform?: ((obj: T) => T) | undefined;
  /**
   * Only (transformed) objects this accepts are cached and reported; one that stops being
   * accepted is reported deleted. When what it accepts grows, seed() the new objects in.
   */
  keep?: ((obj: T) => boolean) | undefined;
  /** Period of re-emitting every cached object as an update; 0 disables. Default 5 min. */
  resyncPeriodMs?: number | undefined;
  /** LIST page size. Default 500. */
  pageSize?: number | undefined;
  /** Server-side watch timeout, stretched by up to 10 % at random. Default 300 s. */
  watchTimeoutSeconds?: number | undefined;
  /** Reconnect backoff. Default 800 ms doubling to 30 s, as client-go's reflector. */
  backoff?: BackoffPolicy | undefined;
  metrics?: InformerMetrics | undefined;
  /** Hears each failed LIST (a 403 that retrying will not fix, say); it is retried all the same. */
  onListError?: ((error: unknown) => void) | undefined;
  logger?: Logger | undefined;
  random?: Random | undefined;
}

export const DEFAULT_INFORMER_BACKOFF: BackoffPolicy = { baseMs: 800, capMs: 30_000, jitter: 0.5 };
export class Informer<T extends KubeObject = KubeObject> {
  readonly #opts: InformerOptions<T>;
  readonly #logger: Logger;
  readonly #metrics: InformerMetrics;
  readonly #cache = new ObjectCache<T>();
  readonly #stop = new AbortController();
  readonly #synced = Promise.withResolvers<boolean>();
  #hasSynced = false;
  #lastListError: unknown;
  /** Where the next watch starts; undefined means a LIST is needed first. */
  #resourceVersion: string | undefined;
  #loop: Promise<void> | undefined;
  #resyncTimer: NodeJS.Timeout | undefined;
  /** seed() calls under way, and what the watch deleted meanwhile (a seed may predate it). */
  #seeding = 0;
  readonly #deletedWhileSeeding = new Map<string, T>();
  /** Every registration, in order: each change is reported to each, in this order. */
  readonly #handlers: InformerHandlers<T>[] = [];

  constructor(opts: InformerOptions<T>) {
    this.#opts = opts;
    if (opts.handlers) this.#handlers.push(opts.handlers);
    this.#logger = (opts.logger ?? silentLogger()).child({ informer: opts.path });
    this.#metrics = guardHooks(opts.metrics, ['list', 'watchRestart', 'event'], (err, hook) =>
      this.#logger.error({ err, hook }, 'informer metrics hook failed'),
    );
  }

  /** Starts listing and watching; idempotent. */
  start(): void {
    if (this.#stop.signal.aborted) throw new Error(`informer for ${this.#opts.path} was stopped`);
    if (this.#loop) return;
    this.#loop = this.#run(this.#stop.signal).catch((e: unknown) => {
      this.#logger.error({ err: e }, 'informer loop crashed');
    });
    const resync = this.#opts.resyncPeriodMs ?? 5 * 60_000;
    if (resync > 0) this.#resyncTimer = setInterval(() => this.#resync(), resync);
  }

  /** Aborts the watch; resolves once the loop has ended. */
  async stop(): Promise<void> {
    this.#stop.abort();
    clearInterval(this.#resyncTimer);
    this.#synced.resolve(false);
    await this.#loop;
  }

  /** Why the last LIST failed, until one succeeds (e.g. a 403 that retrying will not fix). */
  lastListError(): unknown {
    return this.#lastListError;
  }

  /** True once the first full LIST is in the cache. */
  hasSynced(): boolean {
    return this.#hasSynced;
  }

  /** Resolves true once synced, or false if stopped first. */
  waitForSync(): Promise<boolean> {
    return this.#synced.promise;
  }

  /**
   * Adds handlers, as client-go's AddEventHandler: several consumers share one informer (one LIST
   * and one watch), each with its own handlers. Registered once the informer has synced, they are
   * first told of every cached object as an add, as a fresh informer's LIST would tell them.
   * Returns what removes them: a consumer that stops no longer hears of anything.
   */
  addHandlers(handlers: InformerHandlers<T>): () => void {
    this.#handlers.push(handlers);
    if (this.#hasSynced)
      for (const obj of this.#cache.list()) this.#call(handlers, { type: 'add', key: objectKey(obj), obj });
    return () => {
      const at = this.#handlers.indexOf(handlers);
      if (at >= 0) this.#handlers.splice(at, 1);
    };
  }

  /** The cached object, shared with the cache: copy before changing it. */
  get(key: string): T | undefined {
    return this.#cache.get(key);
  }

  list(): T[] {
    return this.#cache.list();
  }

  keys(): string[] {
    return this.#cache.keys();
  }

  async #run(signal: AbortSignal): Promise<void> {
    const policy = this.#opts.backoff ?? DEFAULT_INFORMER_BACKOFF;
    let failures = 0;
    while (!signal.aborted) {
      if (failures > 0) await sleep(backoffDelay(failures - 1, policy, this.#opts.random), signal);
      if (signal.aborted) break;
      if (this.#resourceVersion === undefined) {
        try {
          await this.#relist(signal);
        } catch (e) {
          if (signal.aborted) break;
          failures++;
          this.#lastListError = e;
          this.#logger.warn({ err: e, failures }, 'informer list failed');
          this.#reportListError(e);
          continue;
        }
      }
      const end = await this.#watchStream(this.#resourceVersion ?? '', signal);
      if (signal.aborted) break;
      this.#metrics.watchRestart?.(end.reason);
      if (end.reason === 'gone') this.#resourceVersion = undefined;
      failures = end.healthy ? 0 : failures + 1;
      const log = { err: end.error, reason: end.reason, failures };
      if (end.reason === 'closed') this.#logger.debug(log, 'watch closed by the server');
      else this.#logger.warn(log, 'watch ended');
    }
  }

  #reportListError(e: unknown): void {
    try {
      this.#opts.onListError?.(e);
    } catch (err) {
      this.#logger.error({ err }, 'informer onListError hook failed');
    }
  }

  async #relist(signal: AbortSignal): Promise<void> {
    const items: T[] = [];
    let resourceVersion = '';
    let next: string | undefined;
    do {
      const page = await this.#opts.client.request<ObjectList<T> & { apiVersion?: string; kind?: string }>({
        method: 'GET',
        path: this.#opts.path,
        query: { ...this.#selectors(), limit: this.#opts.pageSize ?? 500, continue: next },
        signal,
      });
      // Items of built-in lists carry no apiVersion/kind; watch events do. Make them agree.
      const typeMeta = { apiVersion: page.apiVersion, kind: page.kind?.replace(/List$/, '') };
      for (const item of page.items) {
        const obj = this.#transform({ ...typeMeta, ...item });
        if (this.#keeps(obj)) items.push(obj);
      }
      resourceVersion = page.metadata.resourceVersion ?? resourceVersion;
      next = page.metadata.continue || undefined;
    } while (next);
    this.#metrics.list?.();
    this.#lastListError = undefined;
    for (const change of this.#cache.replace(items)) this.#dispatch(change);
    this.#resourceVersion = resourceVersion;
    if (!this.#hasSynced) {
      this.#hasSynced = true;
      this.#synced.resolve(true);
    }
  }

  /** Runs one watch stream from `resourceVersion` to its end; never throws. */
  #watchStream(resourceVersion: string, signal: AbortSignal): Promise<StreamEnd> {
    return watchOnce({
      client: this.#opts.client,
      path: this.#opts.path,
      query: { ...this.#selectors(), resourceVersion },
      timeoutSeconds: jitterUp(this.#opts.watchTimeoutSeconds ?? 300, 0.1, this.#opts.random),
      signal,
      onEvent: (type) => this.#metrics.event?.(type),
      apply: (event) => this.#apply(event as WatchEvent<T>),
    });
  }

  /**
   * Adds objects `list` reads apart from this informer (e.g. by a narrower selector, once keep()
   * accepts them), unless the watch delivered them, something newer, or their deletion meanwhile.
   */
  async seed(list: () => Promise<readonly T[]>): Promise<void> {
    this.#seeding++;
    try {
      for (const item of await list()) {
        const obj = this.#transform(item);
        const deleted = this.#deletedWhileSeeding.get(objectKey(obj));
        if (!deleted || isNewer(obj, deleted)) this.#store(obj);
      }
    } finally {
      if (--this.#seeding === 0) this.#deletedWhileSeeding.clear();
    }
  }

  /** Forgets, without reporting, the cached objects keep() no longer accepts. */
  prune(): void {
    for (const obj of this.#cache.list()) if (!this.#keeps(obj)) this.#cache.remove(obj);
  }

  #apply(event: WatchEvent<T>): void {
    if (event.type === 'ADDED' || event.type === 'MODIFIED') {
      this.#store(this.#transform(event.object));
    } else if (event.type === 'DELETED') {
      const obj = this.#transform(event.object);
      if (this.#seeding > 0) this.#deletedWhileSeeding.set(objectKey(obj), obj);
      if (this.#keeps(obj) || this.#cache.get(objectKey(obj))) this.#dispatch(this.#cache.remove(obj));
    }
    // Every event, bookmarks included, moves the restart point forward.
    const resourceVersion = event.object.metadata?.resourceVersion;
    if (resourceVersion) this.#resourceVersion = resourceVersion;
  }

  #store(obj: T): void {
    if (!this.#keeps(obj)) {
      if (this.#cache.get(objectKey(obj))) this.#dispatch(this.#cache.remove(obj));
      return;
    }
    // A seeded object may be newer than the watch's position: never go back to an older state.
    const change = this.#opts.keep ? this.#cache.upsertNewer(obj) : this.#cache.upsert(obj);
    if (change) this.#dispatch(change);
  }

  #keeps(obj: T): boolean {
    return this.#opts.keep ? this.#opts.keep(obj) : true;
  }

  #resync(): void {
    if (!this.#hasSynced || this.#stop.signal.aborted) return;
    for (const obj of this.#cache.list())
      this.#dispatch({ type: 'update', key: objectKey(obj), old: obj, obj });
  }

  #dispatch(change: CacheChange<T>): void {
    // A copy: a handler may remove its own registration (or another's) while being called.
    for (const handlers of [...this.#handlers]) this.#call(handlers, change);
  }

  #call(handlers: InformerHandlers<T>, change: CacheChange<T>): void {
    const report = (e: unknown) =>
      this.#logger.error({ err: e, key: change.key, event: change.type }, 'informer handler failed');
    try {
      let result: unknown;
      if (change.type === 'add') result = handlers.onAdd?.(change.obj, change.key);
      else if (change.type === 'update') result = handlers.onUpdate?.(change.old, change.obj, change.key);
      else result = handlers.onDelete?.(change.obj, change.key);
      if (result instanceof Promise) result.catch(report);
    } catch (e) {
      report(e);
    }
  }

  #transform(obj: T): T {
    return this.#opts.transform ? this.#opts.transform(obj) : obj;
  }

  #selectors(): Query {
    return { labelSelector: this.#opts.labelSelector, fieldSelector: this.#opts.fieldSelector };
  }
}

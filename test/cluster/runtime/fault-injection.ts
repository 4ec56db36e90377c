/**
 * Wrappers around a real KubeClient that let a test break the network the way production does:
 * drop a watch stream, hold reconnects, answer a reconnect with 410 Gone, or partition a process
 * from the server.
 *
 * Why 410 is injected rather than provoked: the server answers Gone only for a resourceVersion
 * that etcd has compacted away, and the API server compacts every 5 minutes; until then it
 * serves a watch from any old resourceVersion by replaying history. So the wrapper sends exactly
 * what the server would, and everything else (the relist, the diff) runs against the real server.
 */
import type { KubeClient, KubeRequest, Query, WatchEvent } from '../../../src/kube/client.ts';
import { KubeApiError, type StatusBody } from '../../../src/kube/errors.ts';
import type { ListWatchClient } from '../../../src/runtime/informer.ts';

export class CuttableWatchClient implements ListWatchClient {
  readonly #inner: KubeClient;
  #cut = new AbortController();
  #held: PromiseWithResolvers<void> | undefined;
  #gone: 'event' | 'http' | undefined;
  /** Query of every watch the informer asked for, in order. */
  readonly watchQueries: Query[] = [];
  openWatches = 0;
  requests = 0;

  constructor(inner: KubeClient) {
    this.#inner = inner;
  }

  request<T>(req: KubeRequest): Promise<T> {
    this.requests++;
    return this.#inner.request<T>(req);
  }

  async *watch<T>(path: string, query: Query, signal: AbortSignal): AsyncGenerator<WatchEvent<T>> {
    this.watchQueries.push(query);
    if (this.#held) await untilAborted(this.#held.promise, signal);
    if (signal.aborted) return;
    const gone = this.#gone;
    this.#gone = undefined;
    const status = expired(query.resourceVersion);
    if (gone === 'http') throw new KubeApiError('WATCH', path, 410, status);
    this.openWatches++;
    try {
      if (gone === 'event') yield { type: 'ERROR', object: status as T };
      else yield* this.#inner.watch<T>(path, query, AbortSignal.any([signal, this.#cut.signal]));
    } finally {
      this.openWatches--;
    }
  }

  /** Ends the current watch stream and holds every new one until reconnect(). */
  disconnect(): void {
    this.#held ??= Promise.withResolvers<void>();
    this.#cut.abort();
    this.#cut = new AbortController();
  }

  /**
   * Lets held watches through. `gone` answers the next one with 410 Gone, as the server does for
   * a compacted resourceVersion: an ERROR event in a 200 stream, or an HTTP 410.
   */
  reconnect(opts: { gone?: 'event' | 'http' } = {}): void {
    this.#gone = opts.gone;
    this.#held?.resolve();
    this.#held = undefined;
  }
}

/** A client whose requests, once partitioned, never reach the server and hang until aborted. */
export class PartitionableClient {
  readonly #inner: KubeClient;
  partitioned = false;

  constructor(inner: KubeClient) {
    this.#inner = inner;
  }

  request<T>(req: KubeRequest): Promise<T> {
    if (!this.partitioned) return this.#inner.request<T>(req);
    return new Promise<T>((_, reject) => {
      req.signal?.addEventListener('abort', () => reject(req.signal?.reason), { once: true });
    });
  }
}

function expired(resourceVersion: unknown): StatusBody {
  return {
    kind: 'Status',
    status: 'Failure',
    message: `too old resource version: ${String(resourceVersion)}`,
    reason: 'Expired',
    code: 410,
  };
}

function untilAborted(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    signal.addEventListener('abort', () => resolve(), { once: true });
    void promise.then(resolve);
  });
}

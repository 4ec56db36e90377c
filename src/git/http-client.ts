/**
 * isomorphic-git's HTTP client over Node's fetch, with what the stock `http/node` client lacks:
 * a timeout (on connecting and on every chunk of the body, so slow large packs still succeed but a
 * stalled server does not hang a poll forever) and an observer for metrics.
 */
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import { FetchTooLargeError, HttpTimeoutError } from './errors.ts';

export interface HttpExchange {
  method: string;
  url: string;
  /** HTTP status, or undefined when no response arrived. */
  status: number | undefined;
  durationMs: number;
}

export interface HttpClientOptions {
  /** Longest wait for the response headers or for the next chunk of the body. Default 60s. */
  idleTimeoutMs?: number;
  /** Called once per request when its response headers arrive or it fails. */
  onExchange?: (exchange: HttpExchange) => void;
}

const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  return {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const method = req.method ?? 'GET';
      const started = performance.now();
      const observe = (status: number | undefined) =>
        options.onExchange?.({ method, url: req.url, status, durationMs: performance.now() - started });
      const controller = new AbortController();
      const timer = new IdleTimer(idleTimeoutMs, () =>
        controller.abort(new HttpTimeoutError(req.url, idleTimeoutMs)),
      );
      req.signal?.addEventListener('abort', () => controller.abort(req.signal?.reason), { once: true });
      // Request bodies (pack negotiation, pushed packs) are built in memory by isomorphic-git anyway;
      // sending one buffer gives a Content-Length, which some servers require.
      const body = req.body ? await collect(req.body) : undefined;
      timer.arm();
      let res: Response;
      try {
        res = await fetch(req.url, {
          method,
          headers: req.headers ?? {},
          ...(body && { body }),
          signal: controller.signal,
          redirect: 'follow',
        });
      } catch (error) {
        timer.stop();
        observe(undefined);
        throw controller.signal.aborted ? controller.signal.reason : error;
      }
      timer.arm();
      observe(res.status);
      return {
        url: res.url,
        method,
        statusCode: res.status,
        statusMessage: res.statusText,
        headers: Object.fromEntries(res.headers),
        body: res.body ? watchBody(res.body, timer, controller.signal) : emptyBody(timer),
      };
    },
  };
}

/** Re-armed on each chunk; stopped when the body ends or fails. Unref'd: it never keeps the process alive. */
class IdleTimer {
  readonly #ms: number;
  readonly #onIdle: () => void;
  #timer: NodeJS.Timeout | undefined;

  constructor(ms: number, onIdle: () => void) {
    this.#ms = ms;
    this.#onIdle = onIdle;
  }

  arm(): void {
    this.stop();
    this.#timer = setTimeout(this.#onIdle, this.#ms).unref();
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

async function* watchBody(
  stream: ReadableStream<Uint8Array>,
  timer: IdleTimer,
  signal: AbortSignal,
): AsyncIterableIterator<Uint8Array> {
  try {
    for await (const chunk of stream) {
      timer.arm();
      yield chunk;
    }
  } catch (error) {
    throw signal.aborted ? signal.reason : error;
  } finally {
    timer.stop();
  }
}

// biome-ignore lint/correctness/useYield: an empty body yields nothing
async function* emptyBody(timer: IdleTimer): AsyncIterableIterator<Uint8Array> {
  timer.stop();
}

async function collect(body: AsyncIterableIterator<Uint8Array> | Iterable<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * `http` with a budget: the response bodies of every request made through the returned client
 * may total at most `maxBytes`, so one per operation bounds what a fetch downloads (a pack is
 * held in memory several times over while isomorphic-git indexes it). Past the budget, or when a
 * Content-Length announces more, the body is cancelled (which closes the connection) and the
 * request fails with a FetchTooLargeError.
 */
export function limitResponseBytes(http: HttpClient, maxBytes: number): HttpClient {
  let received = 0;
  async function* counted(body: AsyncIterableIterator<Uint8Array>): AsyncIterableIterator<Uint8Array> {
    for await (const chunk of body) {
      received += chunk.byteLength;
      if (received > maxBytes) throw new FetchTooLargeError(maxBytes); // for-await cancels `body`
      yield chunk;
    }
  }
  return {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const res = await http.request(req);
      const announced = Number(res.headers?.['content-length'] ?? Number.NaN);
      if (received + announced > maxBytes) {
        await res.body?.return?.();
        throw new FetchTooLargeError(maxBytes);
      }
      return { ...res, ...(res.body && { body: counted(res.body) }) };
    },
  };
}

/**
 * isomorphic-git's HTTP client over node:http and node:https, with what the stock `http/node`
 * client lacks: a timeout (on connecting and on every chunk of the body, so slow large packs still
 * succeed but a stalled server does not hang a poll forever), redirects followed as fetch follows
 * them but never carrying credentials to another origin, and an observer for metrics.
 *
 * Not fetch: its first use loads undici and compiles llhttp's WebAssembly, 16 MiB resident for the
 * life of a `janus run` whose other clients (Kubernetes) speak node:http anyway.
 */
import type { Agent, IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import { http, https } from '../node-builtins.ts';
import { FetchDeadlineError, FetchTooLargeError, HttpTimeoutError } from './errors.ts';

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
/** Redirects followed for one request (fetch allows 20; a forge moving a repository needs one or two). */
export const MAX_REDIRECTS = 5;
const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
/** Headers that carry credentials: dropped when a redirect leaves the origin, as fetch does. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

export interface Outgoing {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

export function createHttpClient(options: HttpClientOptions = {}): HttpClient {
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const agents: Record<string, Agent> = {
    'http:': new http.Agent({ keepAlive: true }),
    'https:': new https.Agent({ keepAlive: true }),
  };
  return {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      const method = req.method ?? 'GET';
      const started = performance.now();
      const observe = (status: number | undefined) =>
        options.onExchange?.({ method, url: req.url, status, durationMs: performance.now() - started });
      // Request bodies (pack negotiation, pushed packs) are built in memory by isomorphic-git anyway;
      // sending one buffer gives a Content-Length, which some servers require.
      const body = req.body ? await collect(req.body) : undefined;
      let out: Outgoing = { url: new URL(req.url), method, headers: lowercase(req.headers), body };
      for (let redirects = 0; ; redirects++) {
        const timer = new IdleTimer(idleTimeoutMs);
        let res: IncomingMessage;
        try {
          res = await sendResendingStale(out, agents, timer, req.signal);
        } catch (error) {
          timer.stop();
          observe(undefined);
          throw timer.fired ? new HttpTimeoutError(out.url.href, idleTimeoutMs) : error;
        }
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (!REDIRECTS.has(status) || location === undefined) {
          observe(status);
          return {
            url: out.url.href,
            method: out.method,
            statusCode: status,
            statusMessage: res.statusMessage ?? '',
            headers: flatten(res.headers),
            body: watchBody(res, timer, out.url.href, idleTimeoutMs),
          };
        }
        timer.stop();
        res.resume(); // a redirect's own body is not read
        if (redirects >= MAX_REDIRECTS) {
          observe(status);
          throw new Error(`${req.url}: more than ${MAX_REDIRECTS} redirects`);
        }
        out = redirected(out, status, location);
      }
    },
  };
}

/** The request a redirect asks for, by fetch's rules; never with credentials to another origin. */
export function redirected(out: Outgoing, status: number, location: string): Outgoing {
  const url = new URL(location, out.url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new Error(`${out.url.href}: redirected to ${url.protocol} (only http and https are followed)`);
  }
  let { method, body, headers } = out;
  if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
    method = 'GET';
    body = undefined;
    headers = without(headers, ['content-type', 'content-length']);
  }
  if (url.origin !== out.url.origin) headers = without(headers, CREDENTIAL_HEADERS);
  return { url, method, headers, body };
}

/**
 * Sends `out`; when a kept-alive connection was stale and `out` only reads, once more on a
 * connection of its own (the pool's other idle connections may be as stale).
 */
async function sendResendingStale(
  out: Outgoing,
  agents: Record<string, Agent>,
  timer: IdleTimer,
  signal: AbortSignal | undefined,
): Promise<IncomingMessage> {
  const original = (error: unknown) => (error instanceof StaleConnection ? error.cause : error);
  try {
    return await send(out, agents[out.url.protocol], timer, signal);
  } catch (error) {
    if (!(error instanceof StaleConnection && readsOnly(out))) throw original(error);
  }
  return send(out, false, timer, signal).catch((error: unknown) => {
    throw original(error);
  });
}

/** `agent`: the pool to take a kept-alive connection from, or false for a connection of its own. */
function send(
  out: Outgoing,
  agent: Agent | false | undefined,
  timer: IdleTimer,
  signal: AbortSignal | undefined,
): Promise<IncomingMessage> {
  const transport = out.url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = transport.request(out.url, {
      method: out.method,
      headers: {
        ...out.headers,
        ...(out.body !== undefined && { 'content-length': String(out.body.length) }),
      },
      agent,
      ...(signal && { signal }),
    });
    timer.arm(() => request.destroy(new Error('idle')));
    request.on('response', (res) => {
      timer.arm(() => res.destroy(new Error('idle')));
      resolve(res);
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      reject(request.reusedSocket && error.code === 'ECONNRESET' ? new StaleConnection(error) : error);
    });
    request.end(out.body);
  });
}

/**
 * A kept-alive connection reset as a request went out on it, before any answer: most often the
 * server closing it for idleness at that moment (Node's own server does after 5 s), so the
 * request never reached it. Requests that only read are sent once more, on a new connection;
 * a push is not (it may have arrived: the results writer finds out what landed and replays).
 */
class StaleConnection extends Error {
  override readonly cause: Error;
  constructor(cause: Error) {
    super(cause.message);
    this.cause = cause;
  }
}

/** Discovery, ls-refs and fetch: asking twice changes nothing on the server. */
function readsOnly(out: Outgoing): boolean {
  return out.method === 'GET' || (out.method === 'POST' && out.url.pathname.endsWith('/git-upload-pack'));
}

/** Re-armed on each chunk; stopped when the body ends or fails. Unref'd: it never keeps the process alive. */
class IdleTimer {
  readonly #ms: number;
  #timer: NodeJS.Timeout | undefined;
  fired = false;

  constructor(ms: number) {
    this.#ms = ms;
  }

  arm(onIdle: () => void): void {
    this.stop();
    this.#timer = setTimeout(() => {
      this.fired = true;
      onIdle();
    }, this.#ms).unref();
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * The response body, re-arming the idle timer on each chunk. Ending it early (return(), as
 * limitResponseBytes does past its budget) closes the connection, so no socket is left waiting
 * on a body nobody reads.
 */
function watchBody(
  res: IncomingMessage,
  timer: IdleTimer,
  url: string,
  idleTimeoutMs: number,
): AsyncIterableIterator<Uint8Array> {
  const chunks = res[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const failure = (error: unknown) => (timer.fired ? new HttpTimeoutError(url, idleTimeoutMs) : error);
  return {
    [Symbol.asyncIterator]() {
      return this;
    },
    async next() {
      let chunk: IteratorResult<Buffer>;
      try {
        chunk = await chunks.next();
      } catch (error) {
        timer.stop();
        throw failure(error);
      }
      if (chunk.done) {
        timer.stop();
        // A response destroyed by the timer may end its stream rather than fail it.
        if (timer.fired) throw failure(undefined);
        return { done: true, value: undefined };
      }
      timer.arm(() => res.destroy(new Error('idle')));
      return { done: false, value: chunk.value };
    },
    async return() {
      timer.stop();
      res.destroy();
      return { done: true, value: undefined };
    },
  };
}

function flatten(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function lowercase(headers: Record<string, string> | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]));
}

function without(headers: Record<string, string>, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !names.includes(k)));
}

async function collect(body: AsyncIterableIterator<Uint8Array> | Iterable<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * `http` with a budget: the response bodies of every request made through the returned client
 * may total at most `maxBytes`, so one per operation bounds what a fetch downloads (the pack is
 * read into memory once to be indexed, pack-indexer.ts). Past the budget, or when a
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

/**
 * `http` with a deadline: every request made through the returned client, bodies included, must
 * end within `ms` of its creation, so one per operation bounds how long a fetch holds the
 * repository's queue (the idle timeout alone lets a server keep a fetch alive for ever by
 * sending a byte a minute). Past it, the connection is closed and the request fails with a
 * FetchDeadlineError.
 */
export function limitDuration(http: HttpClient, ms: number): HttpClient {
  const deadline = AbortSignal.timeout(ms);
  const failure = (url: string, error: unknown) =>
    deadline.aborted ? new FetchDeadlineError(url, ms) : error;
  async function* guarded(
    url: string,
    body: AsyncIterableIterator<Uint8Array>,
  ): AsyncIterableIterator<Uint8Array> {
    try {
      yield* body;
    } catch (error) {
      throw failure(url, error);
    }
  }
  return {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      if (deadline.aborted) throw new FetchDeadlineError(req.url, ms);
      const signal = req.signal ? AbortSignal.any([req.signal as AbortSignal, deadline]) : deadline;
      try {
        const res = await http.request({ ...req, signal });
        return { ...res, ...(res.body && { body: guarded(req.url, res.body) }) };
      } catch (error) {
        throw failure(req.url, error);
      }
    },
  };
}

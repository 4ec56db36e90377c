/**
 * One connection to one API server: the TLS material and credentials of a kubeconfig context,
 * keep-alive HTTP agents shared by every client (impersonated or not), and the hooks that
 * observe every request (metrics, request counting in tests and benchmarks).
 *
 * Two pools of sockets, so that no number of watches can delay a request: over HTTP/1.1 a watch
 * holds its socket for as long as it runs (minutes), a request for milliseconds. Requests (leader
 * and lock renewals, status writes, dry runs, reads, LISTs) have REQUEST_SOCKETS of their own;
 * watch streams have STREAM_SOCKETS, of which the health gate may take at most
 * MAX_GATE_WATCHES (src/controller/health-watch.ts) so the controller's own watches always find
 * one. Neither pool queues without end: a request that gets no socket within SOCKET_WAIT_MS fails
 * with a reason that says so, and its caller retries as it would after any lost connection.
 *
 * Node's own http/https: at a controller's request rates it is as fast as undici, and undici's
 * module costs about 20 MB of resident memory in every process.
 */
import type { Agent, IncomingMessage } from 'node:http';
import { http, https } from '../node-builtins.ts';
import { type Credentials, credentialsFor } from './credentials.ts';
import { KubeConnectionError } from './errors.ts';
import { type KubeConfig, KubeConfigError } from './kubeconfig.ts';

export { type LoadOptions, loadKubeConfig } from './kubeconfig.ts';

export interface RequestRecord {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly seconds: number;
  /** The user the request was made as, when impersonating. */
  readonly impersonating: string | undefined;
}

export type RequestObserver = (record: RequestRecord) => void;

export interface HttpRequest {
  method: string;
  /** Path and query, below the server URL's own path. */
  path: string;
  headers: Record<string, string>;
  body?: string | undefined;
  signal?: AbortSignal | undefined;
  /** A watch: once the response starts, it may stay silent for as long as the server likes. */
  streaming?: boolean;
}

/** A request, or a stream, silent for this long has failed. */
const IDLE_TIMEOUT_MS = 60_000;

/** Sockets for requests: every reconcile and renewal at once, never taken by a watch. */
export const REQUEST_SOCKETS = 64;
/** Sockets for watch streams: the controller's own informers and the health gate's watches. */
export const STREAM_SOCKETS = 128;
/** How long a request or watch may wait for a free socket of its pool before it fails. */
export const SOCKET_WAIT_MS = 30_000;

/** Credentials (tokens from exec plugins, projected ServiceAccount tokens) can rotate: re-read them this often. */
const AUTH_REFRESH_MS = 10_000;

export class Connection {
  readonly server: URL;
  /** The kubeconfig context it was made from, for error messages. */
  readonly context: string;
  /** For requests: short, never a watch. */
  readonly agent: Agent;
  /** For watch streams only. */
  readonly streamAgent: Agent;
  readonly userAgent: string;
  readonly #credentials: Credentials;
  readonly #observers = new Set<RequestObserver>();
  #authHeaders: Record<string, string> = {};
  #authReadAt = Number.NEGATIVE_INFINITY;
  #requests = 0;
  readonly #exitAfterRequests: number | undefined;
  /** Test-only: "<METHOD> <path regular expression>" of the request to die right after (see recordRequest). */
  readonly #exitAfterRequest: { method: string; path: RegExp } | undefined;

  private constructor(server: URL, context: string, credentials: Credentials, userAgent: string) {
    this.server = server;
    this.context = context;
    this.#credentials = credentials;
    this.userAgent = userAgent;
    const { tls } = credentials;
    const agent = (maxSockets: number): Agent => {
      // Sockets are reused across requests (keep-alive), up to maxSockets at once.
      const pool = { keepAlive: true, keepAliveMsecs: 30_000, maxSockets };
      return server.protocol === 'http:'
        ? new http.Agent(pool)
        : new https.Agent({
            ...pool,
            ...(tls.ca !== undefined && { ca: tls.ca }),
            ...(tls.cert !== undefined && { cert: tls.cert }),
            ...(tls.key !== undefined && { key: tls.key }),
            ...(tls.rejectUnauthorized !== undefined && { rejectUnauthorized: tls.rejectUnauthorized }),
            ...(tls.servername !== undefined && { servername: tls.servername }),
          });
    };
    this.agent = agent(REQUEST_SOCKETS);
    this.streamAgent = agent(STREAM_SOCKETS);
    const exitAfter = Number(process.env.JANUS_TEST_EXIT_AFTER_REQUESTS);
    this.#exitAfterRequests = Number.isInteger(exitAfter) && exitAfter > 0 ? exitAfter : undefined;
    const [method, path] = (process.env.JANUS_TEST_EXIT_AFTER_REQUEST ?? '').split(' ', 2);
    this.#exitAfterRequest = method && path ? { method, path: new RegExp(path) } : undefined;
  }

  static async fromKubeConfig(config: KubeConfig, userAgent = 'janus'): Promise<Connection> {
    const cluster = config.cluster;
    if (!cluster)
      throw new KubeConfigError(
        `kubeconfig ${config.source} has no cluster for context "${config.currentContext}"`,
      );
    let server: URL;
    try {
      server = new URL(cluster.server);
    } catch {
      throw new KubeConfigError(
        `kubeconfig ${config.source}: cluster "${cluster.name}": server "${cluster.server}" is not a URL`,
      );
    }
    const conn = new Connection(server, config.currentContext, await credentialsFor(config), userAgent);
    await conn.authHeaders();
    return conn;
  }

  async authHeaders(): Promise<Record<string, string>> {
    if (Date.now() - this.#authReadAt > AUTH_REFRESH_MS) {
      this.#authHeaders = await this.#credentials.headers();
      this.#authReadAt = Date.now();
    }
    return this.#authHeaders;
  }

  /** Sends one HTTP request; resolves with the response once its headers arrive. */
  send(req: HttpRequest): Promise<IncomingMessage> {
    const transport = this.server.protocol === 'http:' ? http : https;
    return new Promise((resolve, reject) => {
      const outgoing = transport.request({
        protocol: this.server.protocol,
        hostname: this.server.hostname,
        port: this.server.port,
        path: this.server.pathname.replace(/\/$/, '') + req.path,
        method: req.method,
        headers: {
          ...req.headers,
          ...(req.body !== undefined && { 'content-length': String(Buffer.byteLength(req.body)) }),
        },
        agent: req.streaming ? this.streamAgent : this.agent,
        timeout: IDLE_TIMEOUT_MS,
        ...(req.signal && { signal: req.signal }),
      });
      // The agent queues a request while all its sockets are busy; bound that wait.
      const waiting = setTimeout(() => {
        const pool = req.streaming ? `${STREAM_SOCKETS} for watches` : `${REQUEST_SOCKETS} for requests`;
        const error = Object.assign(
          new Error(
            `no free connection for ${req.method} ${req.path} within ${SOCKET_WAIT_MS / 1000} s: all ${pool} are busy`,
          ),
          { code: 'ESOCKETWAIT' },
        );
        // A request still queued has no socket to destroy, so destroy() alone reports nothing
        // until one frees; fail it now, and the agent drops it when its turn comes.
        outgoing.destroy(error);
        reject(this.unreachable(error));
      }, SOCKET_WAIT_MS);
      outgoing.once('socket', () => clearTimeout(waiting));
      outgoing.once('close', () => clearTimeout(waiting));
      outgoing.on('timeout', () =>
        outgoing.destroy(
          Object.assign(new Error(`no answer to ${req.method} ${req.path} in 60 s`), { code: 'ETIMEDOUT' }),
        ),
      );
      outgoing.on('response', (res) => {
        if (req.streaming) outgoing.setTimeout(0);
        resolve(res);
      });
      outgoing.on('error', (error) => reject(req.signal?.aborted ? error : this.unreachable(error)));
      outgoing.end(req.body);
    });
  }

  /**
   * A network error (refused, reset, DNS, TLS, timeout) as a KubeConnectionError naming this
   * server and context; anything else (an abort, a parse error) unchanged.
   */
  unreachable(error: unknown): unknown {
    if (error instanceof KubeConnectionError || !(error instanceof Error)) return error;
    if (error.name === 'AbortError' || typeof (error as NodeJS.ErrnoException).code !== 'string')
      return error;
    return new KubeConnectionError(this.serverName, this.context, error);
  }

  /** The server URL as people write it: no trailing slash. */
  get serverName(): string {
    const path = this.server.pathname.replace(/\/+$/, '');
    return `${this.server.origin}${path}`;
  }

  observe(observer: RequestObserver): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  /** Called once per completed request. */
  recordRequest(record: RequestRecord): void {
    // Watches start on their own schedule; counting only the others keeps the count of a given
    // saga the same run after run, so the crash switch below hits the same step every time.
    if (record.method !== 'WATCH') this.#requests++;
    for (const observer of this.#observers) observer(record);
    if (
      record.method !== 'WATCH' &&
      this.#exitAfterRequests !== undefined &&
      this.#requests >= this.#exitAfterRequests
    ) {
      // Test-only crash switch (JANUS_TEST_EXIT_AFTER_REQUESTS): die abruptly right after the k-th
      // request took effect, before the caller sees its answer, as a killed controller would.
      process.kill(process.pid, 'SIGKILL');
    }
    const after = this.#exitAfterRequest;
    // The same, right after the first successful request of this method to a matching path
    // (JANUS_TEST_EXIT_AFTER_REQUEST="POST /transactions$"), when which one it is counts, not when.
    if (after && record.method === after.method && record.status < 300 && after.path.test(record.path)) {
      process.kill(process.pid, 'SIGKILL');
    }
  }

  /** Requests made so far, watches excepted. */
  get requestCount(): number {
    return this.#requests;
  }

  async close(): Promise<void> {
    this.agent.destroy();
    this.streamAgent.destroy();
  }
}

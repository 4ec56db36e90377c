/**
 * One connection to one API server: the TLS material and credentials of a kubeconfig context,
 * a keep-alive HTTP agent shared by every client (impersonated or not), and the hooks that
 * observe every request (metrics, request counting in tests and benchmarks).
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

/** Credentials (tokens from exec plugins, projected ServiceAccount tokens) can rotate: re-read them this often. */
const AUTH_REFRESH_MS = 10_000;

export class Connection {
  readonly server: URL;
  /** The kubeconfig context it was made from, for error messages. */
  readonly context: string;
  readonly agent: Agent;
  readonly userAgent: string;
  readonly #credentials: Credentials;
  readonly #observers = new Set<RequestObserver>();
  #authHeaders: Record<string, string> = {};
  #authReadAt = Number.NEGATIVE_INFINITY;
  #requests = 0;
  readonly #exitAfterRequests: number | undefined;

  private constructor(server: URL, context: string, credentials: Credentials, userAgent: string) {
    this.server = server;
    this.context = context;
    this.#credentials = credentials;
    this.userAgent = userAgent;
    const { tls } = credentials;
    // Sockets are reused across requests; 64 lets many reconciles and their watches run at once.
    const pool = { keepAlive: true, keepAliveMsecs: 30_000, maxSockets: 64 };
    this.agent =
      server.protocol === 'http:'
        ? new http.Agent(pool)
        : new https.Agent({
            ...pool,
            ...(tls.ca !== undefined && { ca: tls.ca }),
            ...(tls.cert !== undefined && { cert: tls.cert }),
            ...(tls.key !== undefined && { key: tls.key }),
            ...(tls.rejectUnauthorized !== undefined && { rejectUnauthorized: tls.rejectUnauthorized }),
            ...(tls.servername !== undefined && { servername: tls.servername }),
          });
    const exitAfter = Number(process.env.JANUS_TEST_EXIT_AFTER_REQUESTS);
    this.#exitAfterRequests = Number.isInteger(exitAfter) && exitAfter > 0 ? exitAfter : undefined;
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
        agent: this.agent,
        timeout: IDLE_TIMEOUT_MS,
        ...(req.signal && { signal: req.signal }),
      });
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
  }

  /** Requests made so far, watches excepted. */
  get requestCount(): number {
    return this.#requests;
  }

  async close(): Promise<void> {
    this.agent.destroy();
  }
}

/**
 * One connection to one API server: the TLS material and credentials of a kubeconfig context,
 * a keep-alive HTTP agent shared by every client (impersonated or not), and the hooks that
 * observe every request (metrics, request counting in tests and benchmarks).
 */
import type https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { Agent } from 'undici';

export interface RequestRecord {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly seconds: number;
  /** The user the request was made as, when impersonating. */
  readonly impersonating: string | undefined;
}

export type RequestObserver = (record: RequestRecord) => void;

export interface LoadOptions {
  /** Path of a kubeconfig file; default: $KUBECONFIG, ~/.kube/config, or the in-cluster config. */
  kubeconfig?: string | undefined;
  /** Context to use instead of the file's current context. */
  context?: string | undefined;
}

/** Loads a kubeconfig the way kubectl does. */
export function loadKubeConfig(opts: LoadOptions = {}): KubeConfig {
  const kc = new KubeConfig();
  if (opts.kubeconfig) kc.loadFromFile(opts.kubeconfig);
  else kc.loadFromDefault();
  if (opts.context) kc.setCurrentContext(opts.context);
  if (!kc.getCurrentCluster()) {
    throw new Error(
      opts.kubeconfig
        ? `kubeconfig ${opts.kubeconfig} has no cluster for context "${kc.getCurrentContext()}"`
        : 'no Kubernetes configuration found: set KUBECONFIG or --kubeconfig, or run inside a cluster',
    );
  }
  return kc;
}

/** Credentials (tokens from exec plugins, projected ServiceAccount tokens) can rotate: re-read them this often. */
const AUTH_REFRESH_MS = 10_000;

export class Connection {
  readonly server: URL;
  readonly agent: Agent;
  readonly userAgent: string;
  readonly #kubeConfig: KubeConfig;
  readonly #observers = new Set<RequestObserver>();
  #authHeaders: Record<string, string> = {};
  #authReadAt = Number.NEGATIVE_INFINITY;
  #requests = 0;
  readonly #exitAfterRequests: number | undefined;

  private constructor(kc: KubeConfig, tls: https.RequestOptions, userAgent: string) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error(`kubeconfig context "${kc.getCurrentContext()}" has no cluster`);
    this.server = new URL(cluster.server);
    this.#kubeConfig = kc;
    this.userAgent = userAgent;
    this.agent = new Agent({
      connections: 64,
      keepAliveTimeout: 30_000,
      connect: {
        ...(tls.ca !== undefined && { ca: tls.ca as string }),
        ...(tls.cert !== undefined && { cert: tls.cert as string }),
        ...(tls.key !== undefined && { key: tls.key as string }),
        ...(tls.rejectUnauthorized !== undefined && { rejectUnauthorized: tls.rejectUnauthorized }),
        ...(tls.servername !== undefined && { servername: tls.servername }),
      },
    });
    const exitAfter = Number(process.env.JANUS_TEST_EXIT_AFTER_REQUESTS);
    this.#exitAfterRequests = Number.isInteger(exitAfter) && exitAfter > 0 ? exitAfter : undefined;
  }

  static async fromKubeConfig(kc: KubeConfig, userAgent = 'janus'): Promise<Connection> {
    const tls: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(tls);
    const conn = new Connection(kc, tls, userAgent);
    conn.#authHeaders = headersOf(tls);
    conn.#authReadAt = Date.now();
    return conn;
  }

  async authHeaders(): Promise<Record<string, string>> {
    if (Date.now() - this.#authReadAt > AUTH_REFRESH_MS) {
      const opts: https.RequestOptions = {};
      await this.#kubeConfig.applyToHTTPSOptions(opts);
      this.#authHeaders = headersOf(opts);
      this.#authReadAt = Date.now();
    }
    return this.#authHeaders;
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
    await this.agent.close();
  }
}

function headersOf(opts: https.RequestOptions): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(opts.headers ?? {})) {
    if (value !== undefined) out[key] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  if (opts.auth) out.Authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
  return out;
}

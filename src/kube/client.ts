/**
 * A thin Kubernetes REST client. Every request is one HTTP request: no hidden discovery, retries
 * or reads, so the API cost of the controller is exactly what its code says.
 */
import type { IncomingMessage } from 'node:http';
import { Connection, type LoadOptions, loadKubeConfig } from './connection.ts';
import { KubeApiError, type StatusBody } from './errors.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
export type Query = Record<string, string | number | boolean | undefined>;

export const PatchType = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;
export type PatchContentType = (typeof PatchType)[keyof typeof PatchType];

export interface KubeRequest {
  method: Method;
  path: string;
  query?: Query | undefined;
  body?: unknown;
  contentType?: string | undefined;
  signal?: AbortSignal | undefined;
}

export interface WatchEvent<T = unknown> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

/** User extras an impersonated request carries (Impersonate-Extra-<key>: one value each), e.g. a Transaction's uid. */
export type UserExtra = Readonly<Record<string, string>>;

export class KubeClient {
  readonly connection: Connection;
  /** The user every request impersonates, or undefined for the connection's own identity. */
  readonly impersonating: string | undefined;
  readonly #extra: UserExtra;
  readonly #impersonated = new Map<string, KubeClient>();

  constructor(connection: Connection, impersonating?: string, extra: UserExtra = {}) {
    this.connection = connection;
    this.impersonating = impersonating;
    this.#extra = extra;
  }

  static async load(opts: LoadOptions & { userAgent?: string } = {}): Promise<KubeClient> {
    return new KubeClient(await Connection.fromKubeConfig(loadKubeConfig(opts), opts.userAgent));
  }

  /**
   * A client that acts as `user` through impersonation, sharing this connection: one per user,
   * or a new one with `extra` (they name one Transaction, so they are not kept).
   */
  as(user: string, extra?: UserExtra): KubeClient {
    if (extra) return new KubeClient(this.connection, user, extra);
    let client = this.#impersonated.get(user);
    if (!client) {
      client = new KubeClient(this.connection, user);
      this.#impersonated.set(user, client);
    }
    return client;
  }

  /** Forgets cached impersonated clients (for identities that no longer exist). */
  forget(user: string): void {
    this.#impersonated.delete(user);
  }

  async request<T>(req: KubeRequest): Promise<T> {
    const started = performance.now();
    const path = req.path + queryString(req.query);
    let status = 0;
    try {
      const res = await this.connection.send({
        method: req.method,
        path,
        headers: await this.#headers(
          req.body === undefined ? undefined : (req.contentType ?? 'application/json'),
        ),
        body: req.body === undefined ? undefined : JSON.stringify(req.body),
        signal: req.signal,
      });
      status = res.statusCode ?? 0;
      const text = await this.#readText(res, req.signal);
      if (status >= 200 && status < 300) return (text ? JSON.parse(text) : undefined) as T;
      throw new KubeApiError(req.method, req.path, status, parseStatus(text), text);
    } finally {
      this.connection.recordRequest({
        method: req.method,
        path: req.path,
        status,
        seconds: (performance.now() - started) / 1000,
        impersonating: this.impersonating,
      });
    }
  }

  /**
   * Opens a watch and yields its events until the server ends the stream or `signal` aborts.
   * Errors before the stream starts are thrown as KubeApiError (410 Gone included).
   */
  async *watch<T>(path: string, query: Query, signal: AbortSignal): AsyncGenerator<WatchEvent<T>> {
    const started = performance.now();
    const res = await this.connection.send({
      method: 'GET',
      path: path + queryString({ ...query, watch: true }),
      headers: await this.#headers(undefined),
      signal,
      // The server closes the stream after timeoutSeconds; bookmarks arrive about every minute.
      streaming: true,
    });
    this.connection.recordRequest({
      method: 'WATCH',
      path,
      status: res.statusCode ?? 0,
      seconds: (performance.now() - started) / 1000,
      impersonating: this.impersonating,
    });
    if (res.statusCode !== 200) {
      const text = await this.#readText(res, signal);
      throw new KubeApiError('WATCH', path, res.statusCode ?? 0, parseStatus(text), text);
    }
    // Decoded as a stream, so a character split across two chunks stays whole.
    res.setEncoding('utf8');
    let buffered = '';
    try {
      for await (const chunk of res) {
        buffered += chunk as string;
        let newline = buffered.indexOf('\n');
        while (newline >= 0) {
          const line = buffered.slice(0, newline).trim();
          buffered = buffered.slice(newline + 1);
          if (line) yield JSON.parse(line) as WatchEvent<T>;
          newline = buffered.indexOf('\n');
        }
      }
    } catch (e) {
      if (signal.aborted) return;
      throw this.connection.unreachable(e);
    } finally {
      res.destroy();
    }
  }

  /** The body; a connection lost while it arrives is a KubeConnectionError. */
  async #readText(res: IncomingMessage, signal: AbortSignal | undefined): Promise<string> {
    try {
      return await readText(res);
    } catch (e) {
      throw signal?.aborted ? e : this.connection.unreachable(e);
    }
  }

  async #headers(contentType: string | undefined): Promise<Record<string, string>> {
    const headers: Record<string, string> = {
      ...(await this.connection.authHeaders()),
      accept: 'application/json',
      'user-agent': this.connection.userAgent,
    };
    if (contentType) headers['content-type'] = contentType;
    if (this.impersonating) headers['impersonate-user'] = this.impersonating;
    // The key is percent-encoded (a header name cannot hold "/"); the API server decodes it.
    for (const [key, value] of Object.entries(this.#extra)) {
      headers[`impersonate-extra-${encodeURIComponent(key.toLowerCase())}`] = value;
    }
    return headers;
  }
}

async function readText(res: IncomingMessage): Promise<string> {
  res.setEncoding('utf8');
  let text = '';
  for await (const chunk of res) text += chunk as string;
  return text;
}

function queryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
  const s = params.toString();
  return s ? `?${s}` : '';
}

function parseStatus(text: string): StatusBody | undefined {
  try {
    const body = JSON.parse(text) as StatusBody;
    return body && typeof body === 'object' ? body : undefined;
  } catch {
    return undefined;
  }
}

/**
 * `janus ui`'s web server: on 127.0.0.1 only, every request checked by access.ts, the page and
 * its scripts from assets/ (no CDN: it works offline), JSON and Server-Sent Events under /api/.
 * Every read and every action goes to the API server with the credentials of the person who
 * started it (their kubeconfig): RBAC decides, and a refusal reaches the page in its words.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RequestKind } from '../api/requests.ts';
import { PHASES, type Transaction } from '../api/v1alpha1/index.ts';
import type { KubeClient } from '../kube/client.ts';
import type { Objects } from '../kube/resources.ts';
import { Transactions } from '../kube/transactions.ts';
import { EXPECTED_ERROR, errorText } from '../log/describe-error.ts';
import { judgeRequest, SECURITY_HEADERS, type UiAccess } from './access.ts';
import { changeDiff } from './change-diff.ts';
import { streamTransaction } from './detail-stream.ts';
import { TransactionFeeds } from './feeds.ts';
import { listGitSides, setSuspended } from './git-sides.ts';
import type { HistoryView } from './history-view.ts';
import { streamSources } from './sources.ts';
import { EventStream } from './sse.ts';
import { transactionRow } from './transaction-view.ts';

export interface UiBackend {
  /** The user's client: every request is theirs. */
  client: KubeClient;
  objects: Objects;
  /** The scope the list opens on: '' for every namespace. */
  initialScope: string;
  /** Where janus run keeps its Git-side ConfigMaps. */
  controllerNamespace: string;
  /** Kinds besides Secret whose content is secret (janus run's --sops-kinds): masked in diffs. */
  sopsKinds: readonly string[];
  /** Shown in the header: whose requests these are. */
  identity: { user: string | undefined; context: string | undefined };
  /** Sends rollback, cancel or retry-rollback as `janus rollback` and `janus cancel` do. */
  request(
    namespace: string,
    name: string,
    request: RequestKind,
    reason: string | undefined,
  ): Promise<{ ok: boolean; message: string }>;
  /** The namespace's outcomes on the results branch; undefined when no repository is known. */
  history: ((namespace: string) => Promise<HistoryView>) | undefined;
}

interface Call {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** The path's segments, decoded. */
  parts: string[];
}

export interface UiServer {
  /** The URL to open, with the secret. */
  url: string;
  port: number;
  close(): Promise<void>;
}

const ASSETS = fileURLToPath(new URL('./assets/', import.meta.url));
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};
/** A Kubernetes name or namespace (DNS subdomain), as a path segment. */
const NAME = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const MAX_BODY_BYTES = 16 * 1024;
const MAX_REASON = 1024;

/** The page is not where the server looks for it (a build without src/ui/assets/, such as the image's dist/). */
export class MissingAssetsError extends Error {
  override readonly name = 'MissingAssetsError';
  readonly [EXPECTED_ERROR] = true;
  constructor() {
    super(
      `janus ui: its page is not in this build (${ASSETS}index.html): run it from a source checkout, ./bin/janus ui`,
    );
  }
}

/** Every file of assets/, read once: the page is small and never changes while the server runs. */
function loadAssets(): Map<string, { type: string; body: Buffer }> {
  const files = new Map<string, { type: string; body: Buffer }>();
  if (!existsSync(join(ASSETS, 'index.html'))) throw new MissingAssetsError();
  for (const name of readdirSync(ASSETS)) {
    const type = TYPES[extname(name)];
    if (type) files.set(`/assets/${name}`, { type, body: readFileSync(join(ASSETS, name)) });
  }
  const index = files.get('/assets/index.html');
  if (index) files.set('/', index);
  return files;
}

export async function startUiServer(backend: UiBackend, opts: { port?: number } = {}): Promise<UiServer> {
  const assets = loadAssets();
  const feeds = new TransactionFeeds(backend.client);
  feeds.warm(backend.initialScope);
  const access: UiAccess = { port: 0, token: randomBytes(24).toString('base64url') };
  const streams = new Set<EventStream>();
  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) json(res, 500, { ok: false, message: errorText(e) });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const verdict = judgeRequest(
      {
        method: req.method ?? '',
        url: req.url ?? '/',
        host: req.headers.host,
        origin: req.headers.origin,
        cookie: req.headers.cookie,
      },
      access,
    );
    if (verdict.kind === 'deny') return json(res, verdict.status, { ok: false, message: verdict.message });
    if (verdict.kind === 'login') {
      res.writeHead(303, {
        ...SECURITY_HEADERS,
        'Set-Cookie': verdict.setCookie,
        Location: verdict.location,
      });
      res.end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    const asset = assets.get(url.pathname);
    if (asset && req.method !== 'POST') {
      res.writeHead(200, { ...SECURITY_HEADERS, 'Content-Type': asset.type });
      res.end(req.method === 'HEAD' ? undefined : asset.body);
      return;
    }
    if (parts[0] !== 'api') return json(res, 404, { ok: false, message: `nothing at ${url.pathname}` });
    const route = ROUTES_OF[`${req.method} ${parts.slice(1, 3).join('/')}`];
    if (!route) return json(res, 404, { ok: false, message: `nothing at ${req.method} ${url.pathname}` });
    return route({ req, res, url, parts });
  }

  /** The API, by "<method> <first two path segments after /api/>". */
  const ROUTES_OF: Record<string, (call: Call) => void | Promise<void>> = {
    'GET info': ({ res }) =>
      json(res, 200, {
        ...backend.identity,
        initialScope: backend.initialScope,
        history: backend.history !== undefined,
        phases: PHASES,
      }),
    'GET stream/transactions': ({ res, url }) =>
      listStream(url.searchParams.get('namespace') ?? backend.initialScope, res),
    'GET stream/transaction': ({ res, parts }) => {
      const named = validNames(parts[3], parts[4]);
      if (!named) return badName(res);
      openStream(res, (stream) => streamTransaction(backend.client, feeds, ...named, stream));
    },
    'GET stream/sources': ({ res, url }) => {
      const scope = url.searchParams.get('namespace') ?? backend.initialScope;
      if (scope !== '' && !NAME.test(scope)) return badName(res);
      openStream(res, (stream) => streamSources(backend.client, scope, stream));
    },
    'GET diff/transaction': ({ res, parts }) => {
      const index = Number(parts[5]);
      const named = validNames(parts[3], parts[4]);
      if (!named || !Number.isSafeInteger(index)) return badName(res);
      return answer(res, async () => {
        const txn = await new Transactions(backend.client).get(...named);
        return changeDiff(backend.objects, txn as Transaction, index, backend.sopsKinds);
      });
    },
    'POST request/transaction': async ({ req, res, parts }) => {
      const named = validNames(parts[3], parts[4]);
      if (!named) return badName(res);
      const body = await readJson(req);
      const kind = body.request;
      if (kind !== 'rollback' && kind !== 'cancel' && kind !== 'retry-rollback') {
        return json(res, 400, { ok: false, message: 'request must be rollback, cancel or retry-rollback' });
      }
      return answer(res, () => backend.request(...named, kind, reasonOf(body)));
    },
    'GET history/namespace': ({ res, parts }) => {
      const [history, ns] = [backend.history, parts[3]];
      if (!ns || !NAME.test(ns)) return badName(res);
      if (!history) {
        return json(res, 200, {
          ok: false,
          message: 'no results repository: start janus ui with --repo (or janus run must have a Git side)',
        });
      }
      return answer(res, () => history(ns));
    },
    'GET git-sides': ({ res }) =>
      answer(res, async () => ({
        namespace: backend.controllerNamespace,
        sides: await listGitSides(backend.objects, backend.controllerNamespace),
      })),
    'POST git-sides/suspend': (call) => suspendOrResume(call, true),
    'POST git-sides/resume': (call) => suspendOrResume(call, false),
  };

  async function suspendOrResume({ req, res, parts }: Call, suspend: boolean): Promise<void> {
    const side = parts[3];
    if (!side || !NAME.test(side)) return badName(res);
    const body = await readJson(req);
    return answer(res, async () => {
      const state = await setSuspended(
        backend.objects,
        backend.controllerNamespace,
        side,
        suspend ? { reason: reasonOf(body) } : false,
      );
      return { message: state.suspended ? `${side} suspended` : `${side} resumed; a poll is requested` };
    });
  }

  function openStream(res: ServerResponse, start: (stream: EventStream) => void): void {
    const stream = new EventStream(res);
    streams.add(stream);
    stream.onClose(() => streams.delete(stream));
    start(stream);
  }

  function listStream(scope: string, res: ServerResponse): void {
    if (scope !== '' && !NAME.test(scope)) {
      badName(res);
      return;
    }
    openStream(res, (stream) => {
      const unsubscribe = feeds.subscribe(scope, {
        snapshot: (txns) => stream.send('snapshot', { scope, rows: txns.map(transactionRow) }),
        upsert: (txn) => stream.send('upsert', transactionRow(txn)),
        remove: (txn) => stream.send('remove', { key: `${txn.metadata.namespace}/${txn.metadata.name}` }),
        problem: (message) => stream.send('problem', { scope, message }),
      });
      stream.onClose(unsubscribe);
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  access.port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${access.port}/?token=${access.token}`,
    port: access.port,
    async close() {
      for (const stream of streams) stream.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await feeds.close();
    },
  };
}

function validNames(ns: string | undefined, name: string | undefined): [string, string] | undefined {
  return ns !== undefined && name !== undefined && NAME.test(ns) && NAME.test(name) ? [ns, name] : undefined;
}

function badName(res: ServerResponse): void {
  json(res, 400, { ok: false, message: 'not a Kubernetes name' });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'Content-Type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

/** Answers with what `fn` returns, or with the error's text (the API server's refusal, in its words). */
async function answer(res: ServerResponse, fn: () => Promise<unknown>): Promise<void> {
  try {
    const result = (await fn()) as Record<string, unknown>;
    json(res, 200, { ok: true, ...result });
  } catch (e) {
    json(res, 200, { ok: false, message: errorText(e) });
  }
}

function reasonOf(body: Record<string, unknown>): string | undefined {
  return typeof body.reason === 'string' && body.reason.trim()
    ? body.reason.trim().slice(0, MAX_REASON)
    : undefined;
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  if (!(req.headers['content-type'] ?? '').startsWith('application/json')) return {};
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new RangeError(`a request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  try {
    const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

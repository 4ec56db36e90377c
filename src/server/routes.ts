import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log/index.ts';
import { DEFAULT_WEBHOOK_PATH, type WebhookRequestHandler } from '../webhook/index.ts';
import { type HealthChecks, runChecks } from './health.ts';

/** What `/metrics` serves; a Metrics instance is one. */
export interface MetricsSource {
  readonly contentType: string;
  text(): Promise<string>;
}

export interface OpsRoutes {
  readonly metrics: MetricsSource;
  readonly health: HealthChecks;
  /** Serves `/webhook` and `/webhook/<provider>`; without it those paths are 404. */
  readonly webhook: WebhookRequestHandler | undefined;
  readonly logger: Logger;
}

const PLAIN_TEXT = 'text/plain; charset=utf-8';
const READ_METHODS = new Set(['GET', 'HEAD']);

/** The request listener of the operations server. */
export function opsRequestHandler(routes: OpsRoutes): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const path = pathnameOf(req.url);
    if (routes.webhook && isWebhookPath(path)) {
      routes.webhook(req, res);
      return;
    }
    const serve = readRoute(path, routes);
    if (serve === undefined) {
      sendText(res, 404, 'not found\n');
      return;
    }
    if (!READ_METHODS.has(req.method ?? '')) {
      sendText(res, 405, 'method not allowed: use GET\n', { allow: 'GET, HEAD' });
      return;
    }
    serve(res);
  };
}

/**
 * The request listener of a webhook-only listener: `/webhook` and `/webhook/<provider>`, and 404
 * for everything else, metrics and probes included, so exposing it exposes nothing more.
 */
export function webhookOnlyRequestHandler(
  webhook: WebhookRequestHandler,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    if (isWebhookPath(pathnameOf(req.url))) webhook(req, res);
    else sendText(res, 404, 'not found\n');
  };
}

function readRoute(path: string, routes: OpsRoutes): ((res: ServerResponse) => void) | undefined {
  switch (path) {
    case '/metrics':
      return (res) => void serveMetrics(res, routes);
    case '/healthz':
    case '/livez':
      return (res) =>
        serveReport(res, runChecks(path.slice(1), [{ name: 'live', check: routes.health.live }]));
    case '/readyz':
      return (res) => serveReport(res, runChecks('readyz', routes.health.ready));
    default:
      return undefined;
  }
}

async function serveMetrics(res: ServerResponse, routes: OpsRoutes): Promise<void> {
  try {
    const body = await routes.metrics.text();
    sendText(res, 200, body, { 'content-type': routes.metrics.contentType });
  } catch (error) {
    // A collect callback threw: say so rather than serve a partial scrape that looks complete.
    routes.logger.error({ err: error }, 'collecting metrics failed');
    sendText(res, 500, 'collecting metrics failed\n');
  }
}

function serveReport(res: ServerResponse, report: { ok: boolean; text: string }): void {
  sendText(res, report.ok ? 200 : 503, report.text);
}

function sendText(
  res: ServerResponse,
  status: number,
  body: string,
  headers: Readonly<Record<string, string>> = {},
): void {
  res.writeHead(status, {
    'content-type': PLAIN_TEXT,
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...headers,
  });
  res.end(body);
}

/** The path without the query string; no URL parsing, so `//x` stays a path, not a host. */
function pathnameOf(url: string | undefined): string {
  return (url ?? '/').split('?', 1)[0] ?? '/';
}

function isWebhookPath(path: string): boolean {
  return path === DEFAULT_WEBHOOK_PATH || path.startsWith(`${DEFAULT_WEBHOOK_PATH}/`);
}

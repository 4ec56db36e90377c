import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Logger, silentLogger } from '../log/index.ts';
import { http } from '../node-builtins.ts';
import type { WebhookRequestHandler } from '../webhook/index.ts';
import { gracefulClose } from './graceful-close.ts';
import type { HealthChecks } from './health.ts';
import { type MetricsSource, opsRequestHandler, webhookOnlyRequestHandler } from './routes.ts';

export interface OpsServerOptions {
  /** 0 picks a free port (tests); read the result from `url`. */
  readonly port: number;
  /** Default `0.0.0.0`: the kubelet probes the pod IP, and Prometheus scrapes it. */
  readonly host?: string | undefined;
  readonly metrics: MetricsSource;
  readonly health: HealthChecks;
  /** Mounted at `/webhook` and `/webhook/<provider>` when given (see also startWebhookServer). */
  readonly webhook?: WebhookRequestHandler | undefined;
  readonly logger?: Logger | undefined;
}

export interface OpsServer {
  /** Where it listens, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  /** Stops accepting, ends keep-alive connections, and waits (up to 5 s) for requests in flight. */
  close(): Promise<void>;
}

/** In-flight requests get this long to finish on close before their connections are cut. */
const CLOSE_GRACE_MS = 5_000;

/**
 * The operations endpoint: `GET /metrics`, `GET /healthz` (also `/livez`), `GET /readyz`, and
 * the webhook receiver when given one. Resolves once listening; rejects if the port cannot be bound.
 */
export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const logger = (options.logger ?? silentLogger()).child({ component: 'ops-server' });
  const handler = opsRequestHandler({
    metrics: options.metrics,
    health: options.health,
    webhook: options.webhook,
    logger,
  });
  return listen(handler, options, logger, 'operations server listening');
}

export interface WebhookServerOptions {
  /** 0 picks a free port (tests); read the result from `url`. */
  readonly port: number;
  /** Default `0.0.0.0`. */
  readonly host?: string | undefined;
  readonly webhook: WebhookRequestHandler;
  readonly logger?: Logger | undefined;
}

/**
 * A listener for the webhook alone (`/webhook`, `/webhook/<provider>`; 404 for anything else), so
 * the one endpoint that faces the Git host can be exposed without metrics and probes.
 */
export async function startWebhookServer(options: WebhookServerOptions): Promise<OpsServer> {
  const logger = (options.logger ?? silentLogger()).child({ component: 'webhook-server' });
  return listen(webhookOnlyRequestHandler(options.webhook), options, logger, 'webhook server listening');
}

async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  options: { port: number; host?: string | undefined },
  logger: Logger,
  listening: string,
): Promise<OpsServer> {
  const server = http.createServer(handler);
  const close = gracefulClose(server, CLOSE_GRACE_MS);
  // The webhook path faces the Internet: do not let slow clients hold sockets open for minutes.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  server.on('error', (error) => logger.error({ err: error }, 'server error'));

  const url = urlOf(server.address() as AddressInfo);
  logger.info({ url }, listening);

  return { url, close };
}

function urlOf(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

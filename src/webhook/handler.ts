import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log/index.ts';
import { silentLogger } from '../log/index.ts';
import { type DeliveryDecision, evaluateDelivery, type WebhookOutcome } from './delivery.ts';
import { deliveryId, detectProvider, providerFromPathSegment, type WebhookProvider } from './providers.ts';
import { branchRef } from './push-event.ts';
import { readBody } from './read-body.ts';
import { sendJson } from './respond.ts';
import type { WebhookSecret } from './signature.ts';

export const DEFAULT_MAX_BODY_BYTES = 5 * 1024 * 1024;
export const DEFAULT_WEBHOOK_PATH = '/webhook';

/** A request for an immediate poll. */
export interface WebhookTrigger {
  readonly provider: WebhookProvider;
  /** The pushed ref; undefined when a generic sender named none. */
  readonly ref: string | undefined;
  readonly deliveryId: string | undefined;
}

export interface WebhookHandlerOptions {
  /** The shared secret configured on the Git host. Required: there is no unauthenticated mode. */
  readonly secret: WebhookSecret;
  /** The watched branch (`main`) or its full ref (`refs/heads/main`). */
  readonly branch: string;
  /** Called synchronously for each triggering delivery: it should only schedule a poll. */
  readonly onTrigger: (trigger: WebhookTrigger) => void;
  readonly logger?: Logger;
  /** Larger bodies are refused with 413. Default 5 MiB. */
  readonly maxBodyBytes?: number;
  /** Where the handler is mounted; `<basePath>/<provider>` is served too. Default `/webhook`. */
  readonly basePath?: string;
  /** Called once per request, e.g. to count `janus_webhook_requests_total{provider,outcome}`. */
  readonly onResult?: (provider: WebhookProvider | 'unknown', outcome: WebhookOutcome) => void;
}

export type WebhookRequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * A node:http handler for push webhooks from GitHub, Gitea/Forgejo, GitLab or a generic HMAC
 * sender. The sender is detected from its headers at `/webhook`, or named at `/webhook/github`,
 * `/webhook/gitea`, `/webhook/forgejo`, `/webhook/gitlab`, `/webhook/generic`.
 * Responses: 202 triggered or ignored, 200 ping, 400 unparseable push, 401 bad or missing
 * signature, 404 unknown path, 405 not POST, 413 body too large, 500 trigger failed.
 */
export function createWebhookHandler(options: WebhookHandlerOptions): WebhookRequestHandler {
  const settings = validate(options);
  const logger = (options.logger ?? silentLogger()).child({ component: 'webhook' });
  const record = (provider: WebhookProvider | 'unknown', outcome: WebhookOutcome): void => {
    options.onResult?.(provider, outcome);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const route = routeOf(req.url, settings.basePath);
    if (route === undefined) {
      sendJson(res, 404, { error: 'not found' });
      record('unknown', 'not_found');
      return;
    }
    const provider = route.provider ?? detectProvider(req.headers) ?? 'generic';
    const context = { provider, delivery: deliveryId(req.headers), remote: req.socket.remoteAddress };
    if (req.method !== 'POST') {
      sendJson(res, 405, { error: 'method not allowed: use POST' }, { allow: 'POST' });
      record(provider, 'method_not_allowed');
      return;
    }

    const body = await readBody(req, settings.maxBodyBytes);
    if (body.kind === 'aborted') {
      logger.debug(context, 'webhook request aborted by the client');
      record(provider, 'aborted');
      return;
    }
    if (body.kind === 'too-large') {
      // Close the connection: the unread rest of the body must not be parsed as a next request.
      sendJson(res, 413, { error: `body exceeds ${settings.maxBodyBytes} bytes` }, { connection: 'close' });
      logger.warn({ ...context, maxBodyBytes: settings.maxBodyBytes }, 'webhook body too large');
      record(provider, 'payload_too_large');
      return;
    }

    const decision = evaluateDelivery({
      provider,
      headers: req.headers,
      body: body.body,
      secret: settings.secret,
      watchedRef: settings.watchedRef,
    });
    if (decision.trigger !== undefined) {
      try {
        options.onTrigger({ provider, ref: decision.trigger.ref, deliveryId: context.delivery });
      } catch (err) {
        // 500 makes the Git host show the failure and offer a redelivery.
        logger.error({ ...context, err }, 'webhook could not trigger a poll');
        sendJson(res, 500, { error: 'could not trigger a poll' });
        record(provider, 'error');
        return;
      }
    }
    sendJson(res, decision.statusCode, decision.response);
    log(logger, context, decision);
    record(provider, decision.outcome);
  }

  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ err, url: req.url }, 'webhook handler failed');
      if (res.headersSent) res.destroy();
      else sendJson(res, 500, { error: 'internal error' });
      record('unknown', 'error');
    });
  };
}

interface Settings {
  readonly secret: WebhookSecret;
  readonly watchedRef: string;
  readonly maxBodyBytes: number;
  readonly basePath: string;
}

function validate(options: WebhookHandlerOptions): Settings {
  if (options.secret.length === 0) throw new Error('webhook secret is empty: the endpoint needs a secret');
  if (options.branch.trim() === '') throw new Error('webhook branch is empty');
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes <= 0) {
    throw new Error(`webhook maxBodyBytes must be a positive integer, got ${maxBodyBytes}`);
  }
  const basePath = (options.basePath ?? DEFAULT_WEBHOOK_PATH).replace(/\/+$/, '');
  if (!basePath.startsWith('/')) throw new Error(`webhook basePath must start with "/", got "${basePath}"`);
  return { secret: options.secret, watchedRef: branchRef(options.branch.trim()), maxBodyBytes, basePath };
}

/** `{}` for the base path, `{ provider }` for `<base>/<provider>`, undefined for anything else. */
function routeOf(url: string | undefined, basePath: string): { provider?: WebhookProvider } | undefined {
  const path = (url ?? '/').split('?', 1)[0]?.replace(/\/+$/, '') ?? '';
  if (path === basePath) return {};
  if (!path.startsWith(`${basePath}/`)) return undefined;
  const provider = providerFromPathSegment(path.slice(basePath.length + 1));
  return provider === undefined ? undefined : { provider };
}

function log(logger: Logger, context: object, decision: DeliveryDecision): void {
  const fields = { ...context, outcome: decision.outcome, statusCode: decision.statusCode };
  if (decision.outcome === 'triggered') {
    logger.info({ ...fields, ref: decision.trigger?.ref }, 'webhook triggered a poll');
  } else if (decision.statusCode >= 400) {
    logger.warn({ ...fields, reason: decision.detail }, 'webhook request refused');
  } else {
    logger.debug({ ...fields, reason: decision.detail }, 'webhook delivery acknowledged');
  }
}

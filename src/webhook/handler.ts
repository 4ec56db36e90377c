import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../log/index.ts';
import { silentLogger } from '../log/index.ts';
import { Admission } from './admission.ts';
import { type DeliveryDecision, evaluateDelivery, type WebhookOutcome } from './delivery.ts';
import { deliveryId, detectProvider, providerFromPathSegment, type WebhookProvider } from './providers.ts';
import { branchRef } from './push-event.ts';
import { readBody } from './read-body.ts';
import { sendJson } from './respond.ts';
import { UNAUTHORIZED, verdictBeforeBody, type WebhookSecret } from './signature.ts';

/**
 * No Git host sends more: GitHub caps every webhook payload at 25 MB (and drops larger events),
 * GitLab's and Gitea's push payloads list at most 20 (GitLab) or a configured few commits.
 */
export const DEFAULT_MAX_BODY_BYTES = 25 * 1024 * 1024;
/** A push is a few KiB to a few hundred; a larger one is hashed as it streams, not kept. */
export const DEFAULT_KEEP_BODY_BYTES = 1024 * 1024;
/** Requests served at once; with the kept body, at most 32 MiB of bodies in memory. */
export const DEFAULT_MAX_IN_FLIGHT = 32;
/** GitHub waits 10 s for an answer, then counts the delivery failed: no body takes longer. */
export const DEFAULT_BODY_TIMEOUT_MS = 10_000;
/** A request in flight this long may give its place to a new one when all places are taken. */
export const DEFAULT_SHED_AFTER_MS = 1_000;
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
  /** Larger bodies are refused with 413. Default 25 MiB (DEFAULT_MAX_BODY_BYTES). */
  readonly maxBodyBytes?: number;
  /** Bodies up to this size are kept to read their ref; larger ones only hashed. Default 1 MiB. */
  readonly keepBodyBytes?: number;
  /** More requests at once are refused with 503, or displace the oldest (see Admission). Default 32. */
  readonly maxInFlight?: number;
  /** The body must arrive within this long, else 408. Default 10 s. */
  readonly bodyTimeoutMs?: number;
  /** Default 1 s (DEFAULT_SHED_AFTER_MS). */
  readonly shedAfterMs?: number;
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
 * signature, 404 unknown path, 405 not POST, 408 body not received in time, 413 body too large,
 * 503 too many requests at once, 500 trigger failed.
 */
export function createWebhookHandler(options: WebhookHandlerOptions): WebhookRequestHandler {
  const settings = validate(options);
  const logger = (options.logger ?? silentLogger()).child({ component: 'webhook' });
  const record = (provider: WebhookProvider | 'unknown', outcome: WebhookOutcome): void => {
    options.onResult?.(provider, outcome);
  };
  const admission = new Admission({ maxInFlight: settings.maxInFlight, shedAfterMs: settings.shedAfterMs });

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

    const early = verdictBeforeBody(provider, req.headers, settings.secret);
    if (early !== undefined && early !== 'valid') {
      // Refused on its headers: the body is never read, so the connection must not be reused.
      sendJson(res, 401, { error: UNAUTHORIZED[early] }, { connection: 'close' });
      logger.warn({ ...context, reason: UNAUTHORIZED[early] }, 'webhook request refused');
      record(provider, 'unauthorized');
      return;
    }
    const refuse = (status: number, error: string, outcome: WebhookOutcome, headers = {}): void => {
      if (res.headersSent) return;
      // Close the connection: the unread rest of the body must not be parsed as a next request.
      sendJson(res, status, { error }, { ...headers, connection: 'close' });
      record(provider, outcome);
    };
    const place = admission.admit(() => {
      refuse(503, 'displaced by a newer request while the webhook was busy', 'busy', { 'retry-after': '1' });
      logger.warn(context, 'webhook busy: the oldest request in flight gave its place to a new one');
      req.destroy();
    });
    if (place === undefined) {
      refuse(503, `busy: ${settings.maxInFlight} webhook requests in flight`, 'busy', { 'retry-after': '1' });
      logger.warn({ ...context, maxInFlight: settings.maxInFlight }, 'webhook busy: request refused');
      return;
    }
    try {
      await readAndAnswer(req, res, provider, context, refuse);
    } finally {
      place.release();
    }
  }

  async function readAndAnswer(
    req: IncomingMessage,
    res: ServerResponse,
    provider: WebhookProvider,
    context: { provider: WebhookProvider; delivery: string | undefined },
    refuse: (status: number, error: string, outcome: WebhookOutcome) => void,
  ): Promise<void> {
    const body = await readBody(req, {
      maxBytes: settings.maxBodyBytes,
      keepBytes: settings.keepBodyBytes,
      timeoutMs: settings.bodyTimeoutMs,
      hmacKey: provider === 'gitlab' ? undefined : settings.secret,
    });
    if (res.headersSent) return; // displaced while reading
    if (body.kind === 'aborted') {
      logger.debug(context, 'webhook request aborted by the client');
      record(provider, 'aborted');
      return;
    }
    if (body.kind === 'too-large') {
      refuse(413, `body exceeds ${settings.maxBodyBytes} bytes`, 'payload_too_large');
      logger.warn({ ...context, maxBodyBytes: settings.maxBodyBytes }, 'webhook body too large');
      return;
    }
    if (body.kind === 'timed-out') {
      refuse(408, `body not received within ${settings.bodyTimeoutMs} ms`, 'timed_out');
      logger.warn({ ...context, bodyTimeoutMs: settings.bodyTimeoutMs }, 'webhook body too slow');
      req.destroy();
      return;
    }

    const decision = evaluateDelivery({
      provider,
      headers: req.headers,
      body: body.body,
      bodyHmac: body.hmac,
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
  readonly keepBodyBytes: number;
  readonly maxInFlight: number;
  readonly bodyTimeoutMs: number;
  readonly shedAfterMs: number;
  readonly basePath: string;
}

function validate(options: WebhookHandlerOptions): Settings {
  if (options.secret.length === 0) throw new Error('webhook secret is empty: the endpoint needs a secret');
  if (options.branch.trim() === '') throw new Error('webhook branch is empty');
  const positive = (name: string, value: number): number => {
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new Error(`webhook ${name} must be a positive integer, got ${value}`);
    }
    return value;
  };
  const maxBodyBytes = positive('maxBodyBytes', options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
  const keepBodyBytes = Math.min(
    maxBodyBytes,
    positive('keepBodyBytes', options.keepBodyBytes ?? DEFAULT_KEEP_BODY_BYTES),
  );
  const maxInFlight = positive('maxInFlight', options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT);
  const bodyTimeoutMs = positive('bodyTimeoutMs', options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS);
  const shedAfterMs = options.shedAfterMs ?? DEFAULT_SHED_AFTER_MS;
  const basePath = (options.basePath ?? DEFAULT_WEBHOOK_PATH).replace(/\/+$/, '');
  if (!basePath.startsWith('/')) throw new Error(`webhook basePath must start with "/", got "${basePath}"`);
  return {
    secret: options.secret,
    watchedRef: branchRef(options.branch.trim()),
    maxBodyBytes,
    keepBodyBytes,
    maxInFlight,
    bodyTimeoutMs,
    shedAfterMs,
    basePath,
  };
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

import type { WebhookHeaders } from './headers.ts';
import type { WebhookProvider } from './providers.ts';
import { classifyEvent, parsePushRef } from './push-event.ts';
import type { WebhookResponseBody } from './respond.ts';
import { UNAUTHORIZED, verifyBodyHmac, verifySignature, type WebhookSecret } from './signature.ts';

/** How a request ended, as a metric label value. */
export type WebhookOutcome =
  | 'triggered'
  | 'ignored'
  | 'ping'
  | 'unauthorized'
  | 'bad_request'
  | 'payload_too_large'
  | 'timed_out'
  | 'busy'
  | 'method_not_allowed'
  | 'not_found'
  | 'aborted'
  | 'error';

export interface Delivery {
  readonly provider: WebhookProvider;
  readonly headers: WebhookHeaders;
  /** The exact bytes received; undefined when the body was too long to keep (then only hashed). */
  readonly body: Buffer | undefined;
  /** HMAC-SHA256 of the body computed as it streamed in; computed from `body` when absent. */
  readonly bodyHmac?: Buffer | undefined;
  readonly secret: WebhookSecret;
  /** The full ref of the watched branch, e.g. `refs/heads/main`. */
  readonly watchedRef: string;
}

export interface DeliveryDecision {
  readonly statusCode: number;
  readonly response: WebhookResponseBody;
  readonly outcome: WebhookOutcome;
  /** Present when the delivery should trigger a poll; `ref` is undefined for a generic "any". */
  readonly trigger?: { readonly ref: string | undefined };
  /** Why a request was refused, for the log; never echoes secrets or signatures. */
  readonly detail?: string;
}

/**
 * Decides what to do with a delivery whose body was read in full. The signature is checked
 * before the body is parsed, so unauthenticated input is never interpreted.
 */
export function evaluateDelivery(delivery: Delivery): DeliveryDecision {
  const verdict =
    delivery.bodyHmac !== undefined || delivery.body === undefined
      ? verifyBodyHmac(delivery.provider, delivery.headers, delivery.bodyHmac, delivery.secret)
      : verifySignature(delivery.provider, delivery.headers, delivery.body, delivery.secret);
  if (verdict !== 'valid') {
    const error = UNAUTHORIZED[verdict];
    return { statusCode: 401, response: { error }, outcome: 'unauthorized', detail: error };
  }

  const event = classifyEvent(delivery.provider, delivery.headers);
  if (event.kind === 'ping') return { statusCode: 200, response: { status: 'pong' }, outcome: 'ping' };
  if (event.kind === 'other') return ignored(`event "${event.name}" does not trigger a poll`);

  // Authentic, but longer than what is kept to read its ref: a poll reads Git itself anyway.
  if (delivery.body === undefined) return triggered(undefined);
  const push = parsePushRef(delivery.provider, delivery.body);
  if (!push.ok) {
    return { statusCode: 400, response: { error: push.error }, outcome: 'bad_request', detail: push.error };
  }
  if (push.ref !== undefined && push.ref !== delivery.watchedRef) {
    return ignored(`${push.ref} is not the watched branch ${delivery.watchedRef}`);
  }
  return triggered(push.ref);
}

function triggered(ref: string | undefined): DeliveryDecision {
  return { statusCode: 202, response: { status: 'triggered' }, outcome: 'triggered', trigger: { ref } };
}

/** Authentic but irrelevant: acknowledged with 202 so the Git host does not retry or flag it. */
function ignored(reason: string): DeliveryDecision {
  return { statusCode: 202, response: { status: 'ignored', reason }, outcome: 'ignored', detail: reason };
}

/**
 * The generic webhook: a CloudEvents 1.0 event in structured mode (the JSON event format, one
 * event per request, `Content-Type: application/cloudevents+json`), signed with HMAC-SHA256
 * over the exact body, in Flux's generic-hmac header `X-Signature: sha256=<hex>`. Pure.
 */
import { createHmac } from 'node:crypto';
import { DRIFT_PHASES, type NotificationEvent } from '../event.ts';
import type { Message } from '../message.ts';
import type { Payload } from './payload.ts';

export const CLOUDEVENTS_CONTENT_TYPE = 'application/cloudevents+json; charset=utf-8';
export const SIGNATURE_HEADER = 'X-Signature';
/** The `type` attribute's prefix: reverse DNS of the API group, then the phase in lower case. */
export const EVENT_TYPE_PREFIX = 'io.janus.tx.transaction.';
/** The same for a Source's drift events (Drifted, DriftResolved): about a Source, not a Transaction. */
export const SOURCE_EVENT_TYPE_PREFIX = 'io.janus.tx.source.';

export function cloudEventPayload(event: NotificationEvent, message: Message): Payload {
  const ofSource = DRIFT_PHASES.includes(event.phase);
  const body = {
    specversion: '1.0',
    id: event.id,
    source: `/apis/tx.janus.io/v1alpha1/namespaces/${event.namespace}/${ofSource ? 'sources' : 'transactions'}/${event.name}`,
    type: `${ofSource ? SOURCE_EVENT_TYPE_PREFIX : EVENT_TYPE_PREFIX}${event.phase.toLowerCase()}`,
    subject: `${event.namespace}/${event.name}`,
    time: event.time,
    datacontenttype: 'application/json',
    data: {
      namespace: event.namespace,
      name: event.name,
      ...(event.uid && { uid: event.uid }),
      phase: event.phase,
      severity: event.severity,
      reason: event.reason,
      changes: event.changes,
      ...(event.progress && { progress: event.progress }),
      ...(event.errors.length > 0 && { errors: event.errors }),
      ...(event.repository && { repository: event.repository }),
      ...(event.path && { path: event.path }),
      ...(event.commit && { commit: event.commit }),
      ...(event.author && { author: event.author }),
      ...(message.link && { url: message.link }),
    },
  };
  return { contentType: CLOUDEVENTS_CONTENT_TYPE, body: JSON.stringify(body) };
}

/** The header value a receiver recomputes with the shared key to trust the body. */
export function signature(body: string, key: string | Buffer): string {
  return `sha256=${createHmac('sha256', key).update(body, 'utf8').digest('hex')}`;
}

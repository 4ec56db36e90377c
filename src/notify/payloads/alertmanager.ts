/**
 * Alertmanager's API v2 (`POST /api/v2/alerts`, a list of postableAlert). The alert follows
 * the transaction: its identity is the labels {alertname, namespace, transaction, severity} (a
 * Source's drift: {alertname, namespace, source, severity});
 * each event fires the alert of its own severity (warning or error) and resolves (endsAt = now)
 * those of the other severity, so a rollback's warning resolves when the rollback ends, and a
 * Committed transaction (info) resolves both. Janus sends each alert once, so a firing one
 * carries an endsAt: `resolveAfter` later, when Alertmanager resolves it by itself. Pure.
 */
import { DRIFT_PHASES, type NotificationEvent, type Severity } from '../event.ts';
import type { Message } from '../message.ts';
import type { Payload } from './payload.ts';

export const ALERT_NAME = 'JanusTransaction';
const ALERTING: readonly Severity[] = ['warning', 'error'];

export function alertmanagerPayload(
  event: NotificationEvent,
  message: Message,
  resolveAfterMs: number,
): Payload {
  const now = Date.parse(event.time);
  const alerts = ALERTING.map((severity) => {
    const firing = severity === event.severity;
    return {
      labels: {
        alertname: ALERT_NAME,
        namespace: event.namespace,
        // A Source's drift alert is its own (DriftResolved resolves Drifted's), never a Transaction's.
        ...(DRIFT_PHASES.includes(event.phase) ? { source: event.name } : { transaction: event.name }),
        severity,
      },
      annotations: {
        summary: message.title,
        description: message.reason,
        phase: event.phase,
        ...Object.fromEntries(message.facts.map((f) => [f.label.toLowerCase(), f.value])),
      },
      startsAt: event.time,
      endsAt: new Date(firing ? now + resolveAfterMs : now).toISOString(),
      ...(message.link && { generatorURL: message.link }),
    };
  });
  return { contentType: 'application/json', body: JSON.stringify(alerts) };
}

import { Counter, type Registry } from './prom.ts';

export const NOTIFICATION_RESULTS = ['sent', 'retried', 'failed', 'dropped'] as const;
export type NotificationResult = (typeof NOTIFICATION_RESULTS)[number];

/** Notification deliveries (src/notify/delivery.ts). */
export function notificationInstruments(registry: Registry) {
  return {
    deliveries: new Counter({
      name: 'janus_notifications_total',
      help: 'Notification deliveries by provider (as the platform team named it) and result: sent, retried (one failed try that will be tried again), failed (given up), dropped (the queue was full or stopping).',
      labelNames: ['provider', 'result'] as const,
      registers: [registry],
    }),
  };
}

export type NotificationInstruments = ReturnType<typeof notificationInstruments>;

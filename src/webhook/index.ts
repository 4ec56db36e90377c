export type { Delivery, DeliveryDecision, WebhookOutcome } from './delivery.ts';
export { evaluateDelivery } from './delivery.ts';
export type {
  WebhookHandlerOptions,
  WebhookRequestHandler,
  WebhookTrigger,
} from './handler.ts';
export { createWebhookHandler, DEFAULT_MAX_BODY_BYTES, DEFAULT_WEBHOOK_PATH } from './handler.ts';
export type { WebhookHeaders } from './headers.ts';
export type { WebhookProvider } from './providers.ts';
export { detectProvider, WEBHOOK_PROVIDERS } from './providers.ts';
export type { PushRefResult, WebhookEvent } from './push-event.ts';
export { branchRef, classifyEvent, parsePushRef } from './push-event.ts';
export type { SignatureVerdict, WebhookSecret } from './signature.ts';
export { hmacSha256, verifySignature } from './signature.ts';

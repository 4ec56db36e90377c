export type { Check, CheckReport, CheckResult, HealthChecks, NamedCheck } from './health.ts';
export { runChecks } from './health.ts';
export type { OpsServer, OpsServerOptions, WebhookServerOptions } from './ops-server.ts';
export { startOpsServer, startWebhookServer } from './ops-server.ts';
export type { MetricsSource } from './routes.ts';

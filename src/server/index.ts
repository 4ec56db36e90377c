export type { Check, CheckReport, CheckResult, HealthChecks, NamedCheck } from './health.ts';
export { runChecks } from './health.ts';
export type { OpsServer, OpsServerOptions } from './ops-server.ts';
export { startOpsServer } from './ops-server.ts';
export type { MetricsSource } from './routes.ts';

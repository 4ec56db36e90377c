export type { PhaseCounts } from './active-transactions.ts';
export type { RequestSource } from './kube-requests.ts';
export { NO_RESPONSE_CODE } from './kube-requests.ts';
export type {
  GitPollResult,
  GitPushResult,
  ItemOperation,
  LockOperation,
  OperationResult,
  ReconcileResult,
} from './labels.ts';
export {
  GIT_POLL_RESULTS,
  GIT_PUSH_RESULTS,
  ITEM_OPERATIONS,
  LOCK_OPERATIONS,
  OPERATION_RESULTS,
  RECONCILE_RESULTS,
} from './labels.ts';
export type { MetricsOptions } from './metrics.ts';
export { Metrics } from './metrics.ts';
export type { WorkQueueMetrics } from './workqueue.ts';

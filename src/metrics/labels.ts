/**
 * The closed sets of label values Janus records. Every label is an enumeration, never an object
 * name, so the number of series stays bounded however many transactions run.
 */
/** What the health gate checked: the committed changes, or the state a rollback restored. */
export const HEALTH_CHECKS = ['Commit', 'Rollback'] as const;
export type HealthCheckKind = (typeof HEALTH_CHECKS)[number];
/** How a health check ended. */
export const HEALTH_CHECK_RESULTS = [
  'Healthy',
  'Unhealthy',
  'TimedOut',
  'Regressed',
  'AnalysisFailed',
] as const;
export type HealthCheckResult = (typeof HEALTH_CHECK_RESULTS)[number];

/** What one measurement of a metric analysis check found (src/analysis/measurement.ts). */
export const ANALYSIS_RESULTS = ['Passed', 'Failed', 'NoData', 'Error'] as const;
export type AnalysisResult = (typeof ANALYSIS_RESULTS)[number];

/** Saga steps on one item (one target resource) of a transaction. */
export const ITEM_OPERATIONS = ['prepare', 'dryrun', 'commit', 'rollback'] as const;
export type ItemOperation = (typeof ITEM_OPERATIONS)[number];

/** Steps on the Lease that locks a target resource. */
export const LOCK_OPERATIONS = ['acquire', 'renew', 'release', 'takeover', 'wait'] as const;
export type LockOperation = (typeof LOCK_OPERATIONS)[number];

/** `conflict` is a lost race (HTTP 409, a Lease held by another transaction), not a failure. */
export const OPERATION_RESULTS = ['success', 'conflict', 'error'] as const;
export type OperationResult = (typeof OPERATION_RESULTS)[number];

export const GIT_POLL_RESULTS = ['success', 'error'] as const;
export type GitPollResult = (typeof GIT_POLL_RESULTS)[number];

/** `rejected` is a non-fast-forward refusal (someone else pushed first); the writer retries. */
export const GIT_PUSH_RESULTS = ['success', 'rejected', 'error'] as const;
export type GitPushResult = (typeof GIT_PUSH_RESULTS)[number];

/**
 * A commit status delivery: `sent`, `unchanged` (the commit already showed it: nothing sent),
 * `retried` (rate limit or outage; tried again later), `failed` (refused for good: a bad token,
 * an unknown commit; not retried).
 */
export const COMMIT_STATUS_RESULTS = ['sent', 'unchanged', 'retried', 'failed'] as const;
export type CommitStatusResult = (typeof COMMIT_STATUS_RESULTS)[number];

/** `requeue` is a reconcile that succeeded but asked to run again later (a wait, a deadline). */
export const RECONCILE_RESULTS = ['success', 'error', 'requeue'] as const;
export type ReconcileResult = (typeof RECONCILE_RESULTS)[number];

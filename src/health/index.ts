/** The health evaluator the health gate uses (kstatus rules); pure, no I/O. */
export type { HealthAssessment, HealthStatus, RelatedObjects } from './fields.ts';
export { assessHealth, hasHealthRule } from './kstatus.ts';
export { assessPod, containerFailure, POD_FAILURE_REASONS } from './pods.ts';
export { type Restarts, restartsOf } from './restarts.ts';

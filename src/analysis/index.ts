/**
 * Metric analysis: the checks a bake window evaluates. measure() takes one measurement (as the
 * Transaction's ServiceAccount where credentials are read); analysisVerdict() judges them all.
 */

export {
  type AllowedAddress,
  AllowedAddressError,
  parseAllowedAddresses,
} from './allowed-addresses.ts';
export { CredentialsError } from './credentials.ts';
export { AnalysisRequestError, DEFAULT_REQUEST_TIMEOUT_MS, MAX_RESPONSE_BYTES } from './http-get.ts';
export { type MeasureContext, measure } from './measure.ts';
export type { Measurement, MeasurementPhase } from './measurement.ts';
export {
  ALLOWED_ADDRESSES_SETTING,
  type AnalysisPolicy,
  type AnalysisTimeouts,
  analysisRefusal,
  checkAddressRefusal,
  TEMPLATE_NAMESPACES_SETTING,
  timeoutFor,
} from './policy.ts';
export { queryPrometheus } from './prometheus-client.ts';
export { resolveChecks } from './template-reader.ts';
export { AnalysisTemplateError, checksOf } from './templates.ts';
export { analysisVerdict, nextMeasurementAt, type Verdict, type VerdictPhase } from './verdict.ts';

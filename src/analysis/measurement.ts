/** One measurement of a check, and how it counts. Pure. */
import type { AnalysisCheck } from '../api/v1alpha1/analysis.ts';
import { failsWhen, parseFailWhen } from './fail-when.ts';

/**
 * Passed and Failed are numbers judged; NoData a query that found no series (or NaN, as a ratio
 * over no traffic gives); Error a measurement that could not be taken (Prometheus unreachable, a
 * bad query, credentials refused): it says nothing about the release, so it never fails a check.
 */
export type MeasurementPhase = 'Passed' | 'Failed' | 'NoData' | 'Error';

export interface Measurement {
  readonly phase: MeasurementPhase;
  /** RFC 3339, when it was taken. */
  readonly at: string;
  /** The number the query returned, or the HTTP status an HTTP check received. */
  readonly value?: number | undefined;
  /** For people: what was measured and what it showed; a failure names query, value and threshold. */
  readonly message: string;
}

/** Judges a number a Prometheus check's query returned. */
export function judgeQueryResult(check: AnalysisCheck, value: number | undefined, at: string): Measurement {
  const prometheus = check.prometheus;
  if (!prometheus) throw new Error(`check "${check.name}" has no prometheus query`);
  const query = `query ${JSON.stringify(prometheus.query)}`;
  if (value === undefined || Number.isNaN(value)) {
    return { phase: 'NoData', at, message: `${query} returned no data` };
  }
  const condition = parseFailWhen(prometheus.failWhen);
  return failsWhen(condition, value)
    ? {
        phase: 'Failed',
        at,
        value,
        message: `${query} returned ${value}, and the check fails when ${condition.text}`,
      }
    : {
        phase: 'Passed',
        at,
        value,
        message: `${query} returned ${value}, within ${condition.text} (threshold ${condition.threshold})`,
      };
}

/** Judges the status an HTTP check's URL answered: 2xx passes, anything else fails. */
export function judgeHttpStatus(url: string, status: number, at: string): Measurement {
  const ok = status >= 200 && status < 300;
  return {
    phase: ok ? 'Passed' : 'Failed',
    at,
    value: status,
    message: `GET ${url} answered ${status}${ok ? '' : ', and the check needs 2xx'}`,
  };
}

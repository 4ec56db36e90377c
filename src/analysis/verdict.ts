/**
 * A check's verdict from its measurements so far: the evaluator, pure. The caller (the bake
 * window) measures every interval and asks this after each measurement.
 */

import { parseDuration } from '../api/duration.ts';
import {
  type AnalysisCheck,
  DEFAULT_FAILURE_LIMIT,
  DEFAULT_INTERVAL,
  type NoDataPolicy,
} from '../api/v1alpha1/analysis.ts';
import type { Measurement } from './measurement.ts';

/**
 * Failing: the failure limit is reached (the transaction should roll back). Passing: the latest
 * measurement passed and the limit is not reached. Inconclusive: the latest measurement neither
 * passed nor failed (no data under the Inconclusive policy, or an error). Pending: nothing yet.
 */
export type VerdictPhase = 'Pending' | 'Passing' | 'Failing' | 'Inconclusive';

export interface Verdict {
  readonly phase: VerdictPhase;
  readonly failed: number;
  readonly failureLimit: number;
  readonly message: string;
}

type Counted = 'Passed' | 'Failed' | 'Inconclusive';

function counted(m: Measurement, noData: NoDataPolicy): Counted {
  if (m.phase === 'Passed' || m.phase === 'Failed') return m.phase;
  if (m.phase === 'NoData' && noData === 'Fail') return 'Failed';
  if (m.phase === 'NoData' && noData === 'Pass') return 'Passed';
  return 'Inconclusive';
}

export function analysisVerdict(check: AnalysisCheck, measurements: readonly Measurement[]): Verdict {
  const failureLimit = check.failureLimit ?? DEFAULT_FAILURE_LIMIT;
  const noData = check.noData ?? 'Inconclusive';
  const failures = measurements.filter((m) => counted(m, noData) === 'Failed');
  const base = { failed: failures.length, failureLimit };
  const name = `check "${check.name}"`;
  const lastFailure = failures.at(-1);
  if (lastFailure && failures.length >= failureLimit) {
    return {
      ...base,
      phase: 'Failing',
      message: `${name} failed: ${lastFailure.message} (${tally(failures.length, failureLimit)})`,
    };
  }
  const last = measurements.at(-1);
  if (!last) return { ...base, phase: 'Pending', message: `${name} has not measured yet` };
  const phase = counted(last, noData) === 'Inconclusive' ? 'Inconclusive' : 'Passing';
  const failedSoFar = failures.length > 0 ? ` (${tally(failures.length, failureLimit)})` : '';
  return { ...base, phase, message: `${name}: ${last.message}${failedSoFar}` };
}

const tally = (failed: number, limit: number) =>
  `${failed} failed measurement${failed === 1 ? '' : 's'}, failure limit ${limit}`;

/** When the check measures next: an interval after its last measurement, or now. */
export function nextMeasurementAt(
  check: AnalysisCheck,
  measurements: readonly Measurement[],
  now: Date,
): Date {
  const last = measurements.at(-1);
  if (!last) return now;
  return new Date(Date.parse(last.at) + parseDuration(check.interval ?? DEFAULT_INTERVAL));
}

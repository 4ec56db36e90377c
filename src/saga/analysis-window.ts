/**
 * Metric analysis inside the bake window: which checks are due, how a measurement is kept in
 * status.health.analysis (the last MAX_KEPT_MEASUREMENTS, with counts over them all), and what
 * each check tells the window (a WindowCheck). Decided from the persisted state and the clock
 * alone: a controller that restarts resumes from the status, and a measurement taken but never
 * written is simply taken again. Pure.
 */
import { analysisVerdict, type Measurement, nextMeasurementAt, type Verdict } from '../analysis/index.ts';
import {
  type AnalysisCheck,
  type AnalysisCheckStatus,
  MAX_ANALYSIS_CHECKS,
  MAX_KEPT_MEASUREMENTS,
  type Transaction,
} from '../api/v1alpha1/index.ts';
import type { WindowCheck } from './bake-window.ts';
import { pendingCheck } from './health-gate.ts';

/** Why the resolved checks cannot be run as a set (too many, two of one name); undefined if they can. */
export function analysisProblem(checks: readonly AnalysisCheck[]): string | undefined {
  if (checks.length > MAX_ANALYSIS_CHECKS) {
    return `spec.health.analysis expands to ${checks.length} checks, more than the ${MAX_ANALYSIS_CHECKS} a transaction may run`;
  }
  const seen = new Set<string>();
  for (const check of checks) {
    if (seen.has(check.name)) {
      return `spec.health.analysis has two checks named "${check.name}" (from templates or inline): each needs its own name`;
    }
    seen.add(check.name);
  }
  return undefined;
}

/** Each check's persisted state, matched by name; a fresh one for a check not measured yet. */
export function statesOf(
  checks: readonly AnalysisCheck[],
  persisted: readonly AnalysisCheckStatus[] | undefined,
): AnalysisCheckStatus[] {
  const byName = new Map((persisted ?? []).map((s) => [s.name, s]));
  return checks.map((c) => byName.get(c.name) ?? { name: c.name, measured: 0, failed: 0 });
}

/** Whether a check measures now: never measured, or its next measurement is due. */
export function isDue(state: AnalysisCheckStatus, nowMs: number): boolean {
  if (state.measured === 0 || !state.nextAt) return true;
  return Date.parse(state.nextAt) <= nowMs;
}

/**
 * Which measurement a due check takes: the Transaction (its uid: a new one of the same name never
 * takes another's), the check, and the instant it is due. A measurement in flight under this key
 * is the one the check waits for; once recorded, the check's next one has another key.
 */
export function measurementKey(uid: string, state: AnalysisCheckStatus): string {
  return `${uid}/${state.name}/${state.measured === 0 ? 'first' : (state.nextAt ?? 'first')}`;
}

/**
 * Whether the Transaction's checks may measure: its commit check is in an open bake window and
 * it declares analysis. Outside (committed, rolling back, cancelled), measurements in flight are
 * of no use.
 */
export function inAnalysisWindow(txn: Pick<Transaction, 'spec' | 'status'>): boolean {
  return (
    (txn.spec?.health?.analysis?.length ?? 0) > 0 &&
    pendingCheck(txn.status) === 'Commit' &&
    txn.status?.health?.stableSince !== undefined
  );
}

/** Whether a measurement counts against the failure limit, by the check's noData policy. */
function countsAsFailed(check: AnalysisCheck, m: Measurement): boolean {
  return m.phase === 'Failed' || (m.phase === 'NoData' && check.noData === 'Fail');
}

/** The state after one more measurement: kept (the oldest dropped past the bound), counted. */
export function recordMeasurement(
  check: AnalysisCheck,
  state: AnalysisCheckStatus,
  m: Measurement,
  nowMs: number,
): AnalysisCheckStatus {
  const kept = {
    phase: m.phase,
    at: m.at,
    message: m.message,
    ...(m.value !== undefined && { value: m.value }),
  };
  const measurements = [...(state.measurements ?? []), kept].slice(-MAX_KEPT_MEASUREMENTS);
  const failed = countsAsFailed(check, m);
  const nextAt = nextMeasurementAt(check, [m], new Date(nowMs));
  return {
    ...state,
    measured: state.measured + 1,
    failed: state.failed + (failed ? 1 : 0),
    ...(failed ? { lastFailure: kept } : state.lastFailure && { lastFailure: state.lastFailure }),
    measurements,
    nextAt: new Date(Math.max(nextAt.getTime(), nowMs)).toISOString(),
  };
}

/**
 * The check's verdict from its state: Failing once its failed count (over every measurement,
 * not only those kept) reaches the failure limit; otherwise what the kept ones say.
 */
export function checkVerdict(check: AnalysisCheck, state: AnalysisCheckStatus): Verdict {
  const verdict = analysisVerdict(check, (state.measurements ?? []) as Measurement[]);
  if (verdict.phase === 'Failing' || state.failed < verdict.failureLimit || !state.lastFailure)
    return verdict;
  const s = state.failed === 1 ? '' : 's';
  return {
    phase: 'Failing',
    failed: state.failed,
    failureLimit: verdict.failureLimit,
    message: `check "${check.name}" failed: ${state.lastFailure.message} (${state.failed} failed measurement${s}, failure limit ${verdict.failureLimit})`,
  };
}

/**
 * What a check tells the window. Failing: Failed, at once. Before the window's end: Pending (the
 * window does not pass while a check may still fail). At its end: Passed if the latest
 * measurement passed; an Inconclusive check (no data, or the measurement could not be taken)
 * fails, it must not pass silently, unless its noData policy is Pass.
 */
export function windowCheckOf(
  check: AnalysisCheck,
  state: AnalysisCheckStatus,
  atWindowEnd: boolean,
): WindowCheck {
  const verdict = checkVerdict(check, state);
  const name = 'analysis';
  if (verdict.phase === 'Failing') return { name, state: 'Failed', message: verdict.message };
  if (!atWindowEnd || verdict.phase === 'Pending') {
    return { name, state: 'Pending', message: verdict.message };
  }
  if (verdict.phase === 'Passing' || check.noData === 'Pass') {
    return { name, state: 'Passed', message: verdict.message };
  }
  return {
    name,
    state: 'Failed',
    message: `could not be measured at the end of the bake window: ${verdict.message}`,
  };
}

/** When the first of the checks measures next (ms), or undefined when none will. */
export function nextDueMs(states: readonly AnalysisCheckStatus[]): number | undefined {
  const due = states.flatMap((s) => (s.nextAt ? [Date.parse(s.nextAt)] : []));
  return due.length > 0 ? Math.min(...due) : undefined;
}

import { describe, expect, it } from 'vitest';
import type { Measurement } from '../../../src/analysis/index.ts';
import {
  type AnalysisCheck,
  type AnalysisCheckStatus,
  MAX_ANALYSIS_CHECKS,
  MAX_KEPT_MEASUREMENTS,
} from '../../../src/api/v1alpha1/index.ts';
import {
  analysisProblem,
  checkVerdict,
  inAnalysisWindow,
  isDue,
  measurementKey,
  nextDueMs,
  recordMeasurement,
  statesOf,
  windowCheckOf,
} from '../../../src/saga/analysis-window.ts';
import { windowVerdict } from '../../../src/saga/bake-window.ts';
import { fitStatus } from '../../../src/saga/fit-status.ts';
import { txnIn } from './transaction-fixture.ts';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
const S = 1000;

const check = (extra: Partial<AnalysisCheck> = {}): AnalysisCheck => ({
  name: 'error-rate',
  interval: '5s',
  failureLimit: 1,
  noData: 'Inconclusive',
  prometheus: { address: 'http://prom:9090', query: 'errors', failWhen: 'result > 0.05' },
  ...extra,
});
const c0 = {
  name: 'error-rate',
  prometheus: { address: 'http://prom:9090', query: 'errors', failWhen: 'result > 0.05' },
};
const fresh: AnalysisCheckStatus = { name: 'error-rate', measured: 0, failed: 0 };
const passed = (at: number, value = 0.01): Measurement => ({
  phase: 'Passed',
  at: iso(at),
  value,
  message: `query "errors" returned ${value}, within result > 0.05 (threshold 0.05)`,
});
const failed = (at: number, value = 0.3): Measurement => ({
  phase: 'Failed',
  at: iso(at),
  value,
  message: `query "errors" returned ${value}, and the check fails when result > 0.05`,
});
const noData = (at: number): Measurement => ({
  phase: 'NoData',
  at: iso(at),
  message: 'query "errors" returned no data',
});
const error = (at: number): Measurement => ({ phase: 'Error', at: iso(at), message: 'connection refused' });

const measuredAs = (c: AnalysisCheck, ms: readonly Measurement[]) =>
  ms.reduce((state, m) => recordMeasurement(c, state, m, Date.parse(m.at)), fresh);

describe('which analysis checks are due', () => {
  it('measures a check never measured at once, then an interval after its last measurement', () => {
    expect(isDue(fresh, NOW)).toBe(true);
    const state = measuredAs(check(), [passed(NOW)]);
    expect(state.nextAt).toBe(iso(NOW + 5 * S));
    expect(isDue(state, NOW + 4 * S)).toBe(false);
    expect(isDue(state, NOW + 5 * S)).toBe(true);
    expect(nextDueMs([state, measuredAs(check({ interval: '2s' }), [passed(NOW)])])).toBe(NOW + 2 * S);
    expect(nextDueMs([])).toBeUndefined();
  });

  it('resumes from the persisted states, matched by name; a new check starts fresh', () => {
    const persisted = measuredAs(check(), [passed(NOW)]);
    const states = statesOf([check(), check({ name: 'latency' })], [persisted]);
    expect(states).toEqual([persisted, { name: 'latency', measured: 0, failed: 0 }]);
  });

  it('refuses two checks of one name, and more than 16 checks', () => {
    expect(analysisProblem([check(), check()])).toMatch(/two checks named "error-rate"/);
    const many = Array.from({ length: 17 }, (_, i) => check({ name: `c${i}` }));
    expect(analysisProblem(many)).toMatch(/17 checks, more than the 16/);
    expect(analysisProblem([check()])).toBeUndefined();
  });
});

describe('the status a check keeps', () => {
  it(`keeps the last ${MAX_KEPT_MEASUREMENTS} measurements and counts them all`, () => {
    const ms = Array.from({ length: 25 }, (_, i) => (i === 3 ? failed(NOW + i * S) : passed(NOW + i * S)));
    const state = measuredAs(check({ failureLimit: 2 }), ms);
    expect(state.measurements).toHaveLength(MAX_KEPT_MEASUREMENTS);
    expect(state.measurements?.[0]?.at).toBe(iso(NOW + 15 * S));
    expect(state.measured).toBe(25);
    expect(state.failed).toBe(1);
    expect(state.lastFailure?.value).toBe(0.3);
  });

  it('fails on failures no longer kept: the count, not the window of kept measurements, decides', () => {
    const c = check({ failureLimit: 2 });
    const ms = [
      failed(NOW),
      ...Array.from({ length: 12 }, (_, i) => passed(NOW + (i + 1) * S)),
      failed(NOW + 20 * S, 0.4),
    ];
    const verdict = checkVerdict(c, measuredAs(c, ms));
    expect(verdict.phase).toBe('Failing');
    expect(verdict.message).toBe(
      'check "error-rate" failed: query "errors" returned 0.4, and the check fails when result > 0.05 (2 failed measurements, failure limit 2)',
    );
  });

  it('fits the status: 16 checks of 10 kept measurements and a last failure, messages cut to 512, under 160 kB', () => {
    const long = (at: number): Measurement => ({
      ...failed(at),
      message: `query "${'x'.repeat(5000)}" returned 0.3`,
    });
    const states = Array.from({ length: MAX_ANALYSIS_CHECKS }, (_, i) => {
      const c = check({ name: `check-${i}`, failureLimit: 100 });
      return Array.from({ length: 30 }, (_, k) => long(NOW + k * S)).reduce(
        (state, m) => recordMeasurement(c, state, m, Date.parse(m.at)),
        { name: c.name, measured: 0, failed: 0 } as AnalysisCheckStatus,
      );
    });
    const fitted = fitStatus({ health: { check: 'Commit', analysis: states } });
    const messages = (fitted.health?.analysis ?? []).flatMap((st) => [
      ...(st.measurements ?? []).map((m) => m.message),
      st.lastFailure?.message ?? '',
    ]);
    expect(messages).toHaveLength(MAX_ANALYSIS_CHECKS * (MAX_KEPT_MEASUREMENTS + 1));
    for (const message of messages) expect(message.length).toBeLessThanOrEqual(512);
    expect(JSON.stringify(fitted).length).toBeLessThan(160_000);
  });

  it('counts no data as a failure under noData: Fail', () => {
    expect(measuredAs(check({ noData: 'Fail' }), [noData(NOW)]).failed).toBe(1);
    expect(measuredAs(check(), [noData(NOW)]).failed).toBe(0);
  });
});

describe('what a check tells the bake window', () => {
  it('a check at its failure limit fails the window at once, naming query, value and threshold', () => {
    const c = check();
    const wc = windowCheckOf(c, measuredAs(c, [failed(NOW)]), false);
    expect(wc.state).toBe('Failed');
    const verdict = windowVerdict([], { stableForMs: 20 * S, since: iso(NOW), checks: [wc] }, NOW + S);
    expect(verdict).toEqual({
      kind: 'regressed',
      byCheck: true,
      what: 'analysis: check "error-rate" failed: query "errors" returned 0.3, and the check fails when result > 0.05 (1 failed measurement, failure limit 1)',
    });
  });

  it('holds the window while passing before its end, and passes it at the end', () => {
    const c = check();
    const state = measuredAs(c, [passed(NOW)]);
    const before = windowCheckOf(c, state, false);
    expect(before.state).toBe('Pending');
    expect(
      windowVerdict([], { stableForMs: 20 * S, since: iso(NOW), checks: [before] }, NOW + 21 * S).kind,
    ).toBe('baking');
    const atEnd = windowCheckOf(c, state, true);
    expect(atEnd.state).toBe('Passed');
    expect(
      windowVerdict([], { stableForMs: 20 * S, since: iso(NOW), checks: [atEnd] }, NOW + 21 * S),
    ).toEqual({
      kind: 'stable',
    });
  });

  it('does not pass an inconclusive check silently at the end: it fails, saying it could not be measured', () => {
    const c = check();
    for (const m of [noData(NOW), error(NOW)]) {
      const wc = windowCheckOf(c, measuredAs(c, [passed(NOW - S), m]), true);
      expect(wc.state).toBe('Failed');
      expect(wc.message).toMatch(
        /^could not be measured at the end of the bake window: check "error-rate": /,
      );
    }
    expect(windowCheckOf(c, measuredAs(c, [error(NOW)]), false).state).toBe('Pending');
  });

  it('passes an inconclusive check at the end when its noData policy is Pass', () => {
    const c = check({ noData: 'Pass' });
    expect(windowCheckOf(c, measuredAs(c, [error(NOW)]), true).state).toBe('Passed');
    expect(windowCheckOf(c, measuredAs(c, [noData(NOW)]), true).state).toBe('Passed');
  });

  it('keeps a check never measured pending', () => {
    expect(windowCheckOf(check(), fresh, true).state).toBe('Pending');
  });

  it('keys a measurement by Transaction, check and the instant it is due: looking again finds the same one', () => {
    const c = check();
    const once = measuredAs(c, [passed(NOW)]);
    expect(measurementKey('uid-1', fresh)).toBe('uid-1/error-rate/first');
    expect(measurementKey('uid-1', once)).toBe(`uid-1/error-rate/${once.nextAt}`);
    expect(measurementKey('uid-1', once)).toBe(measurementKey('uid-1', { ...once }));
    expect(measurementKey('uid-2', once)).not.toBe(measurementKey('uid-1', once));
    expect(measurementKey('uid-1', measuredAs(c, [passed(NOW), passed(NOW + 5 * S)]))).not.toBe(
      measurementKey('uid-1', once),
    );
  });

  it("measures only in the commit check's open bake window of a transaction that declares analysis", () => {
    const analysis = [{ check: c0 }];
    const health = { check: 'Commit' as const, startedAt: iso(NOW), stableSince: iso(NOW) };
    const inWindow = (spec: object, status: object) => {
      const txn = txnIn({ phase: 'Verifying', status });
      return inAnalysisWindow({ ...txn, spec: { ...txn.spec, health: spec } });
    };
    expect(inWindow({ stableFor: '1m', analysis }, { health })).toBe(true);
    expect(inWindow({ stableFor: '1m' }, { health })).toBe(false);
    expect(inWindow({ stableFor: '1m', analysis }, { health: { ...health, stableSince: undefined } })).toBe(
      false,
    );
    expect(inWindow({ stableFor: '1m', analysis }, { health: { ...health, completedAt: iso(NOW) } })).toBe(
      false,
    );
    expect(inWindow({ stableFor: '1m', analysis }, { health: { ...health, check: 'Rollback' } })).toBe(false);
  });
});

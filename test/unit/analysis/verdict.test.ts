import { describe, expect, it } from 'vitest';
import { judgeHttpStatus, judgeQueryResult, type Measurement } from '../../../src/analysis/measurement.ts';
import { analysisVerdict, nextMeasurementAt } from '../../../src/analysis/verdict.ts';
import type { AnalysisCheck } from '../../../src/api/v1alpha1/analysis.ts';

const QUERY = 'sum(rate(http_requests_total{code="500"}[1m])) / sum(rate(http_requests_total[1m]))';
const errorRatio = (extra: Partial<AnalysisCheck> = {}): AnalysisCheck => ({
  name: 'error-ratio',
  interval: '10s',
  prometheus: { address: 'http://prometheus:9090', query: QUERY, failWhen: 'result > 0.05' },
  ...extra,
});
const at = (s: number) => new Date(Date.UTC(2026, 10, 25, 20, 0, s)).toISOString();
const measured = (check: AnalysisCheck, values: (number | undefined)[]): Measurement[] =>
  values.map((v, i) => judgeQueryResult(check, v, at(i * 10)));

describe('judging one measurement', () => {
  it('fails a value over the threshold, naming query, value and threshold', () => {
    const m = judgeQueryResult(errorRatio(), 0.2, at(0));
    expect(m.phase).toBe('Failed');
    expect(m.value).toBe(0.2);
    expect(m.message).toBe(
      `query ${JSON.stringify(QUERY)} returned 0.2, and the check fails when result > 0.05`,
    );
  });

  it('passes a value at or under the threshold', () => {
    expect(judgeQueryResult(errorRatio(), 0.05, at(0)).phase).toBe('Passed');
    expect(judgeQueryResult(errorRatio(), 0, at(0)).phase).toBe('Passed');
  });

  it('reads no series and NaN (a ratio over no traffic) as no data', () => {
    expect(judgeQueryResult(errorRatio(), undefined, at(0)).phase).toBe('NoData');
    expect(judgeQueryResult(errorRatio(), Number.NaN, at(0)).phase).toBe('NoData');
  });

  it.each([
    ['result < 10', 9, 'Failed'],
    ['result <= 10', 10, 'Failed'],
    ['result >= 10', 10, 'Failed'],
    ['result == 0', 0, 'Failed'],
    ['result != 0', 1, 'Failed'],
    ['result != 0', 0, 'Passed'],
    ['result > 1e3', 1001, 'Failed'],
    ['result > -1', -2, 'Passed'],
  ] as const)('%s with %d is %s', (failWhen, value, phase) => {
    const check = errorRatio({ prometheus: { address: 'http://p', query: 'up', failWhen } });
    expect(judgeQueryResult(check, value, at(0)).phase).toBe(phase);
  });

  it('refuses a condition it cannot read, showing the form', () => {
    const check = errorRatio({ prometheus: { address: 'http://p', query: 'up', failWhen: 'value > 1' } });
    expect(() => judgeQueryResult(check, 1, at(0))).toThrow(
      'failWhen "value > 1" is not a condition such as "result > 0.05"',
    );
  });

  it('passes an HTTP check on 2xx only', () => {
    expect(judgeHttpStatus('http://svc/healthz', 204, at(0)).phase).toBe('Passed');
    const failed = judgeHttpStatus('http://svc/healthz', 503, at(0));
    expect(failed).toMatchObject({ phase: 'Failed', value: 503 });
    expect(failed.message).toBe('GET http://svc/healthz answered 503, and the check needs 2xx');
  });
});

describe('analysisVerdict', () => {
  it('is pending before the first measurement', () => {
    expect(analysisVerdict(errorRatio(), []).phase).toBe('Pending');
  });

  it('passes while every measurement is under the threshold', () => {
    expect(analysisVerdict(errorRatio(), measured(errorRatio(), [0.01, 0.02])).phase).toBe('Passing');
  });

  it('fails at the first failed measurement by default, with query, value and threshold', () => {
    const verdict = analysisVerdict(errorRatio(), measured(errorRatio(), [0.01, 0.3]));
    expect(verdict.phase).toBe('Failing');
    expect(verdict.message).toBe(
      `check "error-ratio" failed: query ${JSON.stringify(QUERY)} returned 0.3, and the check fails when result > 0.05 (1 failed measurement, failure limit 1)`,
    );
  });

  it('tolerates failed measurements under the failure limit, counting them', () => {
    const check = errorRatio({ failureLimit: 3 });
    const two = analysisVerdict(check, measured(check, [0.3, 0.01, 0.3]));
    expect(two).toMatchObject({ phase: 'Passing', failed: 2, failureLimit: 3 });
    expect(analysisVerdict(check, measured(check, [0.3, 0.01, 0.3, 0.2])).phase).toBe('Failing');
  });

  it('calls no data inconclusive by default, and follows the policy otherwise', () => {
    const none = [undefined];
    expect(analysisVerdict(errorRatio(), measured(errorRatio(), none)).phase).toBe('Inconclusive');
    const fail = errorRatio({ noData: 'Fail' });
    expect(analysisVerdict(fail, measured(fail, none)).phase).toBe('Failing');
    const pass = errorRatio({ noData: 'Pass' });
    expect(analysisVerdict(pass, measured(pass, none)).phase).toBe('Passing');
  });

  it('never fails a check on measurements that could not be taken', () => {
    const error: Measurement = {
      phase: 'Error',
      at: at(0),
      message: 'Prometheus at http://p/: connect ECONNREFUSED',
    };
    const verdict = analysisVerdict(errorRatio(), [error, error, error]);
    expect(verdict.phase).toBe('Inconclusive');
    expect(verdict.message).toContain('ECONNREFUSED');
  });

  it('is decided by the latest measurement once under the limit: passing again after no data', () => {
    expect(analysisVerdict(errorRatio(), measured(errorRatio(), [undefined, 0.01])).phase).toBe('Passing');
  });

  it('measures next an interval after the last measurement', () => {
    const now = new Date(at(0));
    expect(nextMeasurementAt(errorRatio(), [], now)).toEqual(now);
    expect(nextMeasurementAt(errorRatio(), measured(errorRatio(), [0.01]), now).toISOString()).toBe(at(10));
  });
});

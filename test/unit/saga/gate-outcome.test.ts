import { describe, expect, it } from 'vitest';
import { type FinishedVerdict, gateOutcome } from '../../../src/saga/gate-outcome.ts';
import type { Assessed } from '../../../src/saga/health-gate.ts';

const crashing: Assessed = {
  index: 1,
  assessment: { status: 'Failed', reason: 'CrashLoopBackOff', message: 'Deployment shop/web: pod crashing' },
};
const rolling: Assessed = {
  index: 1,
  assessment: { status: 'InProgress', reason: 'Progressing', message: 'Deployment shop/web: 1 of 2 updated' },
};
const VERDICTS: Record<FinishedVerdict['kind'], FinishedVerdict> = {
  healthy: { kind: 'healthy' },
  unhealthy: { kind: 'unhealthy', failed: crashing },
  timedOut: { kind: 'timedOut', pending: [rolling] },
  regressed: {
    kind: 'regressed',
    what: 'Deployment shop/web: pod shop/web-1 container app is in CrashLoopBackOff',
    into: '8s into the 30s bake window',
  },
};
const REGRESSED =
  'regressed 8s into the 30s bake window: Deployment shop/web: pod shop/web-1 container app is in CrashLoopBackOff';
const facts = (made: string) => ({ took: '42s', gated: 2, made });
const COMMITTED = '2/2 changes committed: Update Deployment web, Patch ConfigMap app-config';
const UNDONE = '2 committed change(s) rolled back (health check failed)';

describe('gateOutcome: the 2×4 matrix of a finished health check', () => {
  it.each([
    {
      check: 'Commit',
      verdict: 'healthy',
      result: 'Healthy',
      condition: ['True', 'TargetsHealthy'],
      to: 'Committed',
      reason: 'Committed',
      why: '2 target(s) healthy after 42s',
      message: `${COMMITTED}; 2 target(s) healthy after 42s`,
    },
    {
      check: 'Commit',
      verdict: 'unhealthy',
      result: 'Unhealthy',
      condition: ['False', 'HealthCheckFailed'],
      to: 'RollingBack',
      reason: 'HealthCheckFailed',
      why: 'Deployment shop/web: pod crashing (after 42s)',
      message: 'Deployment shop/web: pod crashing (after 42s)',
    },
    {
      check: 'Commit',
      verdict: 'timedOut',
      result: 'TimedOut',
      condition: ['False', 'HealthCheckTimeout'],
      to: 'RollingBack',
      reason: 'HealthCheckTimeout',
      why: 'not healthy within 42s: Deployment shop/web: 1 of 2 updated',
      message: 'not healthy within 42s: Deployment shop/web: 1 of 2 updated',
    },
    {
      check: 'Rollback',
      verdict: 'healthy',
      result: 'Healthy',
      condition: ['True', 'TargetsHealthy'],
      to: 'RolledBack',
      reason: 'RolledBack',
      why: '2 target(s) healthy after 42s',
      message: `${UNDONE}; 2 target(s) healthy after 42s`,
    },
    {
      check: 'Rollback',
      verdict: 'unhealthy',
      result: 'Unhealthy',
      condition: ['False', 'HealthCheckFailed'],
      to: 'Failed',
      reason: 'RollbackUnhealthy',
      why: 'Deployment shop/web: pod crashing (after 42s)',
      message: `${UNDONE}, but the restored state is not healthy: Deployment shop/web: pod crashing (after 42s)`,
    },
    {
      check: 'Rollback',
      verdict: 'timedOut',
      result: 'TimedOut',
      condition: ['False', 'HealthCheckTimeout'],
      to: 'Failed',
      reason: 'RollbackUnhealthy',
      why: 'not healthy within 42s: Deployment shop/web: 1 of 2 updated',
      message: `${UNDONE}, but the restored state is not healthy: not healthy within 42s: Deployment shop/web: 1 of 2 updated`,
    },
    {
      check: 'Commit',
      verdict: 'regressed',
      result: 'Regressed',
      condition: ['False', 'HealthRegressed'],
      to: 'RollingBack',
      reason: 'HealthRegressed',
      why: REGRESSED,
      message: REGRESSED,
    },
    {
      check: 'Rollback',
      verdict: 'regressed',
      result: 'Regressed',
      condition: ['False', 'HealthRegressed'],
      to: 'Failed',
      reason: 'RollbackUnhealthy',
      why: REGRESSED,
      message: `${UNDONE}, but the restored state is not healthy: ${REGRESSED}`,
    },
  ] as const)('$check × $verdict → $to ($reason)', (cell) => {
    const made = cell.check === 'Commit' ? COMMITTED : UNDONE;
    const outcome = gateOutcome(cell.check, VERDICTS[cell.verdict], facts(made));
    expect(outcome).toEqual({
      result: cell.result,
      why: cell.why,
      healthy: { type: 'Healthy', status: cell.condition[0], reason: cell.condition[1], message: cell.why },
      to: cell.to,
      reason: cell.reason,
      message: cell.message,
    });
  });

  it('a window that passed says so; a window that cannot fit says why', () => {
    expect(gateOutcome('Commit', { kind: 'healthy', stableFor: '30s' }, facts(COMMITTED)).why).toBe(
      '2 target(s) healthy and stable for 30s (after 42s)',
    );
    const why = "the 30s bake window did not end before the transaction's deadline";
    expect(gateOutcome('Commit', { kind: 'timedOut', pending: [], why }, facts(COMMITTED)).why).toBe(
      `${why} (after 42s)`,
    );
  });

  it('a failed analysis check rolls back as AnalysisFailed, in the result and the reasons', () => {
    const what =
      'analysis: check "error-ratio" failed: query "errors" returned 0.3, and the check fails when result > 0.05';
    const verdict: FinishedVerdict = {
      kind: 'regressed',
      what,
      into: '4s into the 2m bake window',
      byCheck: true,
    };
    const outcome = gateOutcome('Commit', verdict, facts(COMMITTED));
    expect(outcome).toMatchObject({
      result: 'AnalysisFailed',
      healthy: { status: 'False', reason: 'AnalysisFailed' },
      to: 'RollingBack',
      reason: 'AnalysisFailed',
      why: `regressed 4s into the 2m bake window: ${what}`,
    });
  });
});

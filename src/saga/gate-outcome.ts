/**
 * What a finished health check decides, from which check it was and its verdict alone: the
 * check's result, the Healthy condition, and the phase the transaction goes to with its reason
 * and message. Pure: the verify stage (src/controller/stages/verify.ts) writes it.
 */
import type { HealthCheckStatus, TerminalPhase } from '../api/v1alpha1/index.ts';
import { describePending, type GateVerdict, type HealthCheck } from './health-gate.ts';
import type { ConditionSpec } from './status.ts';

export type HealthResult = NonNullable<HealthCheckStatus['result']>;
export type FinishedVerdict = Exclude<GateVerdict, { kind: 'waiting' | 'baking' }>;

/** What the message needs beyond the verdict. */
export interface GateFacts {
  /** How long the check took: "12s", "3m4s". */
  took: string;
  /** How many targets the check waited for. */
  gated: number;
  /** What the stage before the check did: "3/3 changes committed: …", "2 committed change(s) rolled back". */
  made: string;
}

export interface GateOutcome {
  result: HealthResult;
  /** The check's own message (status.health.message), also the Healthy condition's. */
  why: string;
  healthy: ConditionSpec;
  /**
   * Where the transaction goes. RollingBack is the commit's abort: it adds the fresh deadline
   * and "rolling back N committed change(s)" to `message`.
   */
  to: TerminalPhase | 'RollingBack';
  reason: string;
  message: string;
}

interface Cell {
  to: GateOutcome['to'];
  reason: string;
  message: (made: string, why: string) => string;
}

const VERDICT: Record<
  FinishedVerdict['kind'],
  { result: HealthResult; condition: { status: 'True' | 'False'; reason: string } }
> = {
  healthy: { result: 'Healthy', condition: { status: 'True', reason: 'TargetsHealthy' } },
  unhealthy: { result: 'Unhealthy', condition: { status: 'False', reason: 'HealthCheckFailed' } },
  timedOut: { result: 'TimedOut', condition: { status: 'False', reason: 'HealthCheckTimeout' } },
  regressed: { result: 'Regressed', condition: { status: 'False', reason: 'HealthRegressed' } },
};

/** A metric analysis check failed in the bake window: the targets were healthy, the numbers not. */
const ANALYSIS_FAILED = {
  result: 'AnalysisFailed',
  condition: { status: 'False', reason: 'AnalysisFailed' },
} as const;
const analysisRollback: Cell = { to: 'RollingBack', reason: 'AnalysisFailed', message: (_made, why) => why };

const rollbackUnhealthy: Cell = {
  to: 'Failed',
  reason: 'RollbackUnhealthy',
  message: (made, why) => `${made}, but the restored state is not healthy: ${why}`,
};

/** The 2×4 matrix: which check × what it found. */
const OUTCOMES: Record<HealthCheck, Record<FinishedVerdict['kind'], Cell>> = {
  Commit: {
    healthy: { to: 'Committed', reason: 'Committed', message: (made, why) => `${made}; ${why}` },
    unhealthy: { to: 'RollingBack', reason: 'HealthCheckFailed', message: (_made, why) => why },
    timedOut: { to: 'RollingBack', reason: 'HealthCheckTimeout', message: (_made, why) => why },
    regressed: { to: 'RollingBack', reason: 'HealthRegressed', message: (_made, why) => why },
  },
  Rollback: {
    healthy: { to: 'RolledBack', reason: 'RolledBack', message: (made, why) => `${made}; ${why}` },
    unhealthy: rollbackUnhealthy,
    timedOut: rollbackUnhealthy,
    // The rollback check has no bake window today; were it given one, a regression fails it.
    regressed: rollbackUnhealthy,
  },
};

/** Why the check ended, for status.health.message and the Healthy condition. */
function whyOf(verdict: FinishedVerdict, facts: GateFacts): string {
  switch (verdict.kind) {
    case 'healthy':
      return verdict.stableFor
        ? `${facts.gated} target(s) healthy and stable for ${verdict.stableFor} (after ${facts.took})`
        : `${facts.gated} target(s) healthy after ${facts.took}`;
    case 'unhealthy':
      return `${verdict.failed.assessment.message} (after ${facts.took})`;
    case 'timedOut':
      return verdict.why
        ? `${verdict.why} (after ${facts.took})`
        : `not healthy within ${facts.took}: ${describePending(verdict.pending)}`;
    case 'regressed':
      return `regressed ${verdict.into}: ${verdict.what}`;
  }
}

export function gateOutcome(check: HealthCheck, verdict: FinishedVerdict, facts: GateFacts): GateOutcome {
  const why = whyOf(verdict, facts);
  const byCheck = verdict.kind === 'regressed' && verdict.byCheck === true;
  const { result, condition } = byCheck ? ANALYSIS_FAILED : VERDICT[verdict.kind];
  const cell = byCheck && check === 'Commit' ? analysisRollback : OUTCOMES[check][verdict.kind];
  return {
    result,
    why,
    healthy: { type: 'Healthy', ...condition, message: why },
    to: cell.to,
    reason: cell.reason,
    message: cell.message(facts.made, why),
  };
}

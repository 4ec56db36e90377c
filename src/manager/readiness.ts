/**
 * /readyz: the checks a plan names, read from the current leadership term. A standby has no term
 * and is ready (to take over); the leader is ready once its runnables are.
 */
import type { CheckResult, NamedCheck } from '../server/health.ts';
import type { ReadinessCheckName } from './runnables.ts';

/** What the readiness checks read from a running term. */
export interface TermReadiness {
  controller: { hasSynced(): boolean };
  git?: { readiness(): CheckResult } | undefined;
}

const STANDBY: CheckResult = { ok: true, detail: 'standby' };

const CHECKS: Record<ReadinessCheckName, (term: TermReadiness | undefined) => CheckResult> = {
  // Ready once the leader's controller has listed and watched Transactions.
  'informers-synced': (term) => {
    if (!term) return STANDBY;
    return term.controller.hasSynced()
      ? { ok: true, detail: 'Transactions listed and watched' }
      : { ok: false, detail: 'listing Transactions' };
  },
  'git-reachable': (term) => term?.git?.readiness() ?? STANDBY,
};

/** The named checks, each reading the term `current()` returns at probe time. */
export function readinessChecks(
  names: readonly ReadinessCheckName[],
  current: () => TermReadiness | undefined,
): NamedCheck[] {
  return names.map((name) => ({ name, check: () => CHECKS[name](current()) }));
}

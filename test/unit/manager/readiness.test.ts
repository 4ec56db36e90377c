/** /readyz as the manager builds it: a standby is ready, the leader once its runnables are. */
import { describe, expect, it } from 'vitest';
import { readinessChecks, type TermReadiness } from '../../../src/manager/readiness.ts';
import { runChecks } from '../../../src/server/health.ts';

const BOTH = ['informers-synced', 'git-reachable'] as const;

const term = (synced: boolean, git?: TermReadiness['git']): TermReadiness => ({
  controller: { hasSynced: () => synced },
  git,
});

const readyz = (names: readonly (typeof BOTH)[number][], current: TermReadiness | undefined) =>
  runChecks(
    'readyz',
    readinessChecks(names, () => current),
  );

describe('readinessChecks', () => {
  it('a standby (no term) is ready: it can take over', () => {
    expect(readyz(BOTH, undefined)).toEqual({
      ok: true,
      text: '[+]informers-synced ok\n[+]git-reachable ok\nreadyz check passed\n',
    });
  });

  it('the leader is not ready while it lists Transactions', () => {
    const report = readyz(['informers-synced'], term(false));

    expect(report.ok).toBe(false);
    expect(report.text).toBe('[-]informers-synced failed: listing Transactions\nreadyz check failed\n');
  });

  it("the leader reports the Git side's own check, and one failing check fails /readyz", () => {
    const unreachable = {
      readiness: () => ({ ok: false, detail: 'fetch https://git.example/r: ECONNREFUSED' }),
    };

    expect(readyz(BOTH, term(true, unreachable)).text).toBe(
      '[+]informers-synced ok\n[-]git-reachable failed: fetch https://git.example/r: ECONNREFUSED\nreadyz check failed\n',
    );
    const suspended = {
      readiness: () => ({ ok: true, detail: 'not checked', note: 'not checked: suspended' }),
    };
    expect(readyz(BOTH, term(true, suspended))).toEqual({
      ok: true,
      text: '[+]informers-synced ok\n[+]git-reachable ok: not checked: suspended\nreadyz check passed\n',
    });
  });

  it('reads the term at probe time, not when the checks were built', () => {
    let current: TermReadiness | undefined;
    const checks = readinessChecks(['informers-synced'], () => current);

    expect(runChecks('readyz', checks).ok).toBe(true);
    current = term(false);
    expect(runChecks('readyz', checks).ok).toBe(false);
    current = term(true);
    expect(runChecks('readyz', checks).ok).toBe(true);
  });
});

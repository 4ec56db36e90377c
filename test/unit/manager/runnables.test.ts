/** Which runnables the manager starts for which options: pure, as planRunnables decides them. */
import { describe, expect, it } from 'vitest';
import type { GitOptions, ManagerOptions } from '../../../src/manager/options.ts';
import { planRunnables } from '../../../src/manager/runnables.ts';

const TIMINGS = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };
const OPS = { host: '0.0.0.0', port: 8080 };
const RETENTION = {
  policy: { keepLast: 10, minAgeMs: 3_600_000, rollbackWindowMs: 604_800_000 },
  intervalMs: 60_000,
};

/** `janus controller` with its defaults. */
const controller: Pick<ManagerOptions, 'opsAddress' | 'retention' | 'leaderElection' | 'git'> = {
  opsAddress: OPS,
  retention: RETENTION,
  leaderElection: { enabled: true, leaseName: 'janus-controller', timings: TIMINGS },
};

/** Enough of `janus run`'s Git options for the plan (it reads only the webhook). */
const git = (webhook: GitOptions['webhook']) => ({ ...controller, git: { webhook } as GitOptions });

describe('planRunnables', () => {
  it('janus controller: the ops server on every replica, the controller while leading, one readiness check', () => {
    expect(planRunnables(controller)).toEqual({
      everyReplica: ['ops-server'],
      leaderElection: true,
      whileLeading: ['transaction-controller'],
      webhook: 'off',
      retention: 'not-from-git',
      readiness: ['informers-synced'],
    });
  });

  it('janus run: the Git side after the controller, and Git reachability in /readyz', () => {
    const plan = planRunnables(git(undefined));

    expect(plan.whileLeading).toEqual(['transaction-controller', 'git-side']);
    expect(plan.readiness).toEqual(['informers-synced', 'git-reachable']);
    expect(plan.retention).toBe('once-recorded');
    expect(plan.webhook).toBe('off');
  });

  it('serves the webhook with the metrics, or alone on a listener of its own', () => {
    expect(planRunnables(git({ secret: 's', address: undefined }))).toMatchObject({
      everyReplica: ['ops-server'],
      webhook: 'ops-server',
    });
    expect(planRunnables(git({ secret: 's', address: { host: '0.0.0.0', port: 9443 } }))).toMatchObject({
      everyReplica: ['ops-server', 'webhook-listener'],
      webhook: 'webhook-listener',
    });
  });

  it('with the ops server off (--metrics-bind-address 0), a webhook has its own listener or none', () => {
    const off = { opsAddress: undefined };

    expect(planRunnables({ ...git({ secret: 's', address: undefined }), ...off })).toMatchObject({
      everyReplica: [],
      webhook: 'off',
    });
    expect(
      planRunnables({ ...git({ secret: 's', address: { host: '127.0.0.1', port: 9443 } }), ...off }),
    ).toMatchObject({ everyReplica: ['webhook-listener'], webhook: 'webhook-listener' });
  });

  it('without leader election or pruning, says so', () => {
    const plan = planRunnables({
      ...controller,
      retention: undefined,
      leaderElection: { ...controller.leaderElection, enabled: false },
    });

    expect(plan.leaderElection).toBe(false);
    expect(plan.retention).toBe('off');
    expect(plan.whileLeading).toEqual(['transaction-controller']);
  });
});

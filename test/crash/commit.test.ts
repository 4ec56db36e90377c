/**
 * SPEC §3's central promise, proven by killing the controller process for real after each of its
 * API requests, for a saga that commits: the restarted controller must end exactly where an
 * uninterrupted run ends, with no duplicate apply, no false conflict and no leaked Lease.
 */
import { describe, expect, it } from 'vitest';
import { useClients } from '../support/cluster/kube.ts';
import { testNamespace } from '../support/cluster/saga.ts';
import { expectEndsAsBaseline, killedAfterEveryRequest } from '../support/crash/crash.ts';
import { committingScenario } from '../support/crash/crash-scenarios.ts';

const clients = useClients();

const freshNamespace = (label: string) => testNamespace(clients.admin, `crash-commit-${label}`);

describe('a committing saga killed after every API request', () => {
  // One saga per API request, each with two controller starts: minutes, not seconds.
  it('ends exactly as an uninterrupted run does, whichever request it dies after', {
    timeout: 1_200_000,
  }, async () => {
    const { baseline, outcomes } = await killedAfterEveryRequest(
      clients.admin,
      clients.kubeconfigs.controller,
      committingScenario(clients.admin),
      freshNamespace,
      (baseline) => {
        expect(baseline.phase).toBe('Committed');
        expect(baseline.requests).toBeGreaterThan(10);
        return 1;
      },
    );
    // Every k up to the last request really killed the controller mid-saga.
    expect(outcomes.filter((o) => o.crashed).map((o) => o.k)).toEqual(outcomes.map((o) => o.k));
    expectEndsAsBaseline(outcomes, baseline);
  });
});

/**
 * SPEC §3's central promise, proven by killing the controller process for real, for a saga that
 * commits: the restarted controller must end exactly where an uninterrupted run ends, with no
 * duplicate apply, no false conflict and no leaked Lease. Killed at every stage boundary and
 * after each kind of request the saga makes (the finalizer, a dry run, a lock, the rollback
 * store, the commit of each type, an Event, the release); every other request is killed in
 * memory (test/unit/crash/changes.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { useClients } from '../support/cluster/kube.ts';
import { testNamespace } from '../support/cluster/saga.ts';
import { expectAllCrashed, expectEndsAsBaseline, killedAtPoints } from '../support/crash/crash.ts';
import { committingScenario } from '../support/crash/crash-scenarios.ts';
import { killPoints, type PointSpec } from '../support/crash/request-log.ts';

const clients = useClients();

const freshNamespace = (label: string) => testNamespace(clients.admin, `crash-commit-${label}`);

const POINTS: PointSpec[] = [
  { name: 'finalizer added', phase: 'Pending', method: 'PATCH', path: '/transactions/crashy' },
  { name: 'Event', phase: 'Preparing', method: 'POST', path: '/events' },
  { name: 'dry run', phase: 'Preparing', method: 'PUT', path: '/configmaps/updated' },
  { name: 'lock taken', phase: 'Preparing', method: 'POST', path: '/leases' },
  { name: 'store written', phase: 'Preparing', method: 'POST', path: '/configmaps', asServiceAccount: false },
  { name: 'Create committed', phase: 'Committing', method: 'POST', path: '/configmaps' },
  { name: 'Update committed', phase: 'Committing', method: 'PUT', path: '/configmaps/updated' },
  { name: 'Patch committed', phase: 'Committing', method: 'PATCH', path: '/configmaps/patched' },
  { name: 'Delete committed', phase: 'Committing', method: 'DELETE', path: '/configmaps/deleted' },
  { name: 'locks released', phase: 'Committed', method: 'DELETE', path: '/leases' },
  { name: 'finalizer removed', phase: 'Committed', method: 'PATCH', path: '/transactions/crashy' },
];

describe('a committing saga killed at each of its steps', () => {
  it('ends exactly as an uninterrupted run does, wherever it dies', { timeout: 1_200_000 }, async () => {
    const { baseline, outcomes } = await killedAtPoints(
      clients.admin,
      clients.kubeconfigs.controller,
      committingScenario(clients.admin),
      freshNamespace,
      'commit',
      (baseline) => {
        expect(baseline.phase).toBe('Committed');
        return killPoints(baseline.log, POINTS);
      },
    );
    expectAllCrashed(outcomes);
    expectEndsAsBaseline(outcomes, baseline);
  });
});

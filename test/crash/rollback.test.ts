/**
 * The crash test of a saga that rolls back: a fifth change is refused at commit, so the four
 * before it are undone. Killed at every stage boundary and after each request of the rollback
 * (the refused commit, the read of the rollback store, the undo of each type, the release) and
 * restarted, it must still end RolledBack with every target as it was, no false conflict and no
 * leaked Lease. Every other request is killed in memory (test/unit/crash/changes.test.ts).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { failAtCommit } from '../support/cluster/admission.ts';
import { useClients } from '../support/cluster/kube.ts';
import { testNamespace } from '../support/cluster/saga.ts';
import { expectAllCrashed, expectEndsAsBaseline, killedAtPoints } from '../support/crash/crash.ts';
import { REFUSED_OBJECT, rollingBackScenario } from '../support/crash/crash-scenarios.ts';
import { killPoints, type PointSpec } from '../support/crash/request-log.ts';

const clients = useClients();
const LABEL = { 'janus-test/fail-at-commit': 'crash-rollback' };
let removePolicy: (() => Promise<void>) | undefined;

const freshNamespace = (label: string) =>
  testNamespace(clients.admin, `crash-rollback-${label}`, { labels: LABEL });

afterAll(async () => {
  await removePolicy?.();
});

const POINTS: PointSpec[] = [
  { name: 'commit refused', phase: 'Committing', method: 'POST', path: '/configmaps', refused: true },
  { name: 'store read', phase: 'RollingBack', method: 'GET', path: '/configmaps/crashy-rollback' },
  { name: 'Delete undone', phase: 'RollingBack', method: 'POST', path: '/configmaps' },
  { name: 'Patch undone', phase: 'RollingBack', method: 'PATCH', path: '/configmaps/patched' },
  { name: 'Update undone', phase: 'RollingBack', method: 'PUT', path: '/configmaps/updated' },
  { name: 'Create undone', phase: 'RollingBack', method: 'DELETE', path: '/configmaps/created' },
  { name: 'locks released', phase: 'RolledBack', method: 'DELETE', path: '/leases' },
  { name: 'finalizer removed', phase: 'RolledBack', method: 'PATCH', path: '/transactions/crashy' },
];

describe('a rolling-back saga killed at each of its steps', () => {
  it('ends exactly as an uninterrupted run does, wherever it dies', { timeout: 1_200_000 }, async () => {
    const probe = await freshNamespace('probe');
    removePolicy = await failAtCommit(clients.admin, probe, REFUSED_OBJECT, { matchLabels: LABEL });
    const { baseline, outcomes } = await killedAtPoints(
      clients.admin,
      clients.kubeconfigs.controller,
      rollingBackScenario(clients.admin),
      freshNamespace,
      'rollback',
      (baseline) => {
        expect(baseline.phase).toBe('RolledBack');
        expect(baseline.targets).toMatchObject({
          created: undefined,
          updated: { data: { old: 'value' } },
          patched: { data: { kept: 'yes', changed: 'before' } },
          deleted: { data: { precious: 'data' } },
          refused: undefined,
        });
        // The stage boundaries before the rollback are the committing saga's (commit.test.ts).
        return killPoints(baseline.log, POINTS).filter((p) => !/→ (Preparing|Committing)$/.test(p.name));
      },
    );
    expectAllCrashed(outcomes);
    expectEndsAsBaseline(outcomes, baseline);
  });
});

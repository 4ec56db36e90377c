/**
 * A source's transaction killed for real at each of its steps (SPEC §3's promise for the Apply
 * change and a source's prune): a commit that creates an object, updates one the source applied
 * before (dropping one of its fields) and prunes one; and the same with a fourth change refused
 * at commit, which rolls the three back (the update re-applied by the source's manager, the
 * pruned object re-created by it). Killed at every stage boundary and after each kind of request
 * an Apply or a prune makes; each run must end as the uninterrupted one does: the same phase,
 * item status, contents, and fields the source's manager owns. The scenario and what is compared
 * are crash-scenarios.ts's; every request of it is killed in memory (test/unit/crash/changes.test.ts).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Objects } from '../../src/kube/resources.ts';
import { sourceFieldManager } from '../../src/saga/targets.ts';
import { failAtCommit } from '../support/cluster/admission.ts';
import { useClients } from '../support/cluster/kube.ts';
import { ALL_ON_CONFIGMAPS, serviceAccount, testNamespace } from '../support/cluster/saga.ts';
import {
  expectAllCrashed,
  expectEndsAsBaseline,
  killedAtPoints,
  type Scenario,
} from '../support/crash/crash.ts';
import {
  SOURCE,
  SOURCE_COMMITTED,
  SOURCE_ROLLED_BACK,
  SOURCE_TARGETS,
  sourceAppliedBefore,
  sourceTargetState,
  sourceTransaction,
} from '../support/crash/crash-scenarios.ts';
import { killPoints, type PointSpec } from '../support/crash/request-log.ts';

const clients = useClients();
const LABEL = { 'janus-test/fail-at-commit': 'crash-source' };
let removePolicy: (() => Promise<void>) | undefined;

afterAll(async () => {
  await removePolicy?.();
});

/** The scenario of crash-scenarios.ts (sourceTransaction), on the real API server. */
function scenario(admin: Objects, withRefused: boolean): Scenario {
  return {
    phase: withRefused ? 'RolledBack' : 'Committed',
    async setup(namespace) {
      await serviceAccount(admin, namespace, 'deployer', [ALL_ON_CONFIGMAPS]);
      const fieldManager = sourceFieldManager(namespace, SOURCE);
      for (const object of sourceAppliedBefore(namespace))
        await admin.apply(object, { fieldManager, force: true });
    },
    transaction: (namespace) => sourceTransaction(namespace, withRefused),
    async observe(namespace) {
      const out: Record<string, unknown> = {};
      for (const name of SOURCE_TARGETS)
        out[name] = sourceTargetState(
          await admin.find({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace }),
        );
      return out;
    },
  };
}

const COMMIT_POINTS: PointSpec[] = [
  { name: 'Apply dry run', phase: 'Preparing', method: 'PATCH', path: '/configmaps/updated' },
  { name: 'lock taken', phase: 'Preparing', method: 'POST', path: '/leases' },
  { name: 'store written', phase: 'Preparing', method: 'POST', path: '/configmaps', asServiceAccount: false },
  { name: 'Apply of a new object', phase: 'Committing', method: 'PATCH', path: '/configmaps/created' },
  { name: 'Apply of an applied object', phase: 'Committing', method: 'PATCH', path: '/configmaps/updated' },
  { name: 'prune', phase: 'Committing', method: 'DELETE', path: '/configmaps/pruned' },
  { name: 'locks released', phase: 'Committed', method: 'DELETE', path: '/leases' },
];

const ROLLBACK_POINTS: PointSpec[] = [
  { name: 'refused commit', phase: 'Committing', path: '/configmaps/refused', refused: true },
  { name: 'prune undone', phase: 'RollingBack', path: '/configmaps/pruned', method: 'PATCH' },
  { name: 'update undone', phase: 'RollingBack', path: '/configmaps/updated', method: 'PATCH' },
  { name: 'create undone', phase: 'RollingBack', path: '/configmaps/created', method: 'DELETE' },
  { name: 'locks released', phase: 'RolledBack', method: 'DELETE', path: '/leases' },
];

const freshNamespace = (label: string) =>
  testNamespace(clients.admin, `crash-source-${label}`, { labels: LABEL });

describe("a source's transaction killed at each of its steps", () => {
  it('that commits: a create, an update and a prune end as uninterrupted', {
    timeout: 1_200_000,
  }, async () => {
    const { baseline, outcomes } = await killedAtPoints(
      clients.admin,
      clients.kubeconfigs.controller,
      scenario(clients.admin, false),
      freshNamespace,
      'source-commit',
      (baseline) => {
        expect(baseline.phase).toBe('Committed');
        expect(baseline.targets).toEqual(SOURCE_COMMITTED);
        return killPoints(baseline.log, COMMIT_POINTS);
      },
    );
    expectAllCrashed(outcomes);
    expectEndsAsBaseline(outcomes, baseline);
  });

  it('that rolls back: the three undone end as uninterrupted', { timeout: 1_200_000 }, async () => {
    const probe = await freshNamespace('probe');
    removePolicy = await failAtCommit(clients.admin, probe, 'refused', { matchLabels: LABEL });
    const { baseline, outcomes } = await killedAtPoints(
      clients.admin,
      clients.kubeconfigs.controller,
      scenario(clients.admin, true),
      freshNamespace,
      'source-rollback',
      (baseline) => {
        expect(baseline.phase).toBe('RolledBack');
        expect(baseline.targets).toEqual(SOURCE_ROLLED_BACK);
        return killPoints(baseline.log, ROLLBACK_POINTS);
      },
    );
    expectAllCrashed(outcomes);
    expectEndsAsBaseline(outcomes, baseline);
  });
});

/**
 * The forced rollback of a StatefulSet (issue 23) is as crash-safe as the rest of the saga: a
 * controller killed right after the requests that matter (entering the rollback, the read of the
 * set's update revision, the status write that records it, the restore after it, the deletion of
 * the stuck pod and the requests around it) resumes to the end an uninterrupted run reaches:
 * RolledBack, every pod of the set Ready on the old image. Every request of the saga is killed in
 * memory (test/unit/crash/forced-rollback.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { useClients } from '../support/cluster/kube.ts';
import { POD_IMAGES } from '../support/cluster/pod-images.ts';
import { serviceAccount, testNamespace, transaction } from '../support/cluster/saga.ts';
import { readyWith, statefulSet, statefulSetPods } from '../support/cluster/workloads.ts';
import {
  expectAllCrashed,
  expectEndsAsBaseline,
  killedAtPoints,
  type Scenario,
} from '../support/crash/crash.ts';
import { statefulSetChanges } from '../support/crash/crash-scenarios.ts';
import { type KillPoint, killPoints, type PointSpec } from '../support/crash/request-log.ts';

const clients = useClients();

const DEPLOYER = [
  { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['*'] },
  { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'delete'] },
];

const crashLoopingRelease: Scenario = {
  phase: 'RolledBack',
  async setup(namespace) {
    await serviceAccount(clients.admin, namespace, 'deployer', DEPLOYER);
    await clients.admin.create(statefulSet(namespace, 'db', POD_IMAGES.ready));
    await readyWith(clients.admin, namespace, 'db', POD_IMAGES.ready);
  },
  transaction(namespace) {
    return transaction(namespace, 'release', statefulSetChanges(POD_IMAGES.crashLoop), {
      health: { timeout: '60s' },
    });
  },
  async observe(namespace) {
    // The end state once the set's controller has caught up.
    await readyWith(clients.admin, namespace, 'db', POD_IMAGES.ready);
    return (await statefulSetPods(clients.admin, namespace, 'db')).map((p) => ({
      name: p.name,
      image: p.image,
      ready: p.ready,
    }));
  },
};

/**
 * The requests after which to kill: entering the rollback, around the read of the set's update
 * revision and the status write that records it, the undo, and around the deletion of the stuck
 * pod.
 */
function forcedRollbackPoints(log: string): KillPoint[] {
  const spec = (name: string, method: string, path: string): PointSpec => ({
    name,
    phase: 'RollingBack',
    method,
    path,
  });
  const points = killPoints(log, [
    spec('revision read', 'GET', '/statefulsets/db'),
    spec('revision recorded', 'PATCH', '/transactions/release/status'),
    spec('StatefulSet undone', 'PATCH', '/statefulsets/db'),
    spec('stuck pod deleted', 'DELETE', '/pods/db-2'),
  ]);
  const deleted = points.find((p) => p.name === 'stuck pod deleted')?.k ?? 0;
  const around = [
    { name: 'before the deletion', k: deleted - 1 },
    { name: 'after the deletion', k: deleted + 1 },
  ];
  // Of the stage boundaries, entering the rollback: the others are the gate's (health-gate.test.ts).
  const during = points.filter((p) => !p.name.startsWith('→') || p.name === '→ RollingBack');
  return [...during, ...around]
    .filter((p, i, all) => all.findIndex((q) => q.k === p.k) === i)
    .sort((a, b) => a.k - b.k);
}

describe('a StatefulSet forced rollback killed at its steps', () => {
  it('ends RolledBack with the old pods Ready, as the uninterrupted run', {
    timeout: 1_200_000,
  }, async () => {
    const fresh = (k: string) => testNamespace(clients.admin, `crash-fr-${k}`);
    const { baseline, outcomes } = await killedAtPoints(
      clients.admin,
      clients.kubeconfigs.controller,
      crashLoopingRelease,
      fresh,
      'forced-rollback',
      (baseline) => {
        expect(baseline.phase).toBe('RolledBack');
        expect(baseline.targets).toEqual(
          ['db-0', 'db-1', 'db-2'].map((name) => ({ name, image: POD_IMAGES.ready, ready: true })),
        );
        return forcedRollbackPoints(baseline.log);
      },
    );
    // Every kill point is before the saga's end, so each run really crashed there.
    expectAllCrashed(outcomes);
    expectEndsAsBaseline(outcomes, baseline);
  });
});

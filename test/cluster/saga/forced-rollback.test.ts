/**
 * Rollbacks that finish (issue 23): a StatefulSet with the defaults (OrderedReady, RollingUpdate)
 * rolled to a crash-looping image waits forever for its stuck pod of the bad revision, even after
 * its template is restored; Kubernetes documents the manual step ("forced rollback": delete the
 * pods it already tried to run with the bad configuration). Janus does that step as the
 * transaction's ServiceAccount, or fails at once saying what a human must do.
 */
import { describe, expect, it } from 'vitest';
import type { Change } from '../../../src/api/v1alpha1/index.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import {
  type Rule,
  testNamespace,
  transaction,
  transactionEvents,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { readyWith, statefulSet, statefulSetPods } from '../../support/cluster/workloads.ts';
import { eventually } from '../../support/eventually.ts';
import { withController } from '../../support/processes/controller-process.ts';

const clients = useClients();

const STS = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' };
const MAY_CHANGE_SETS: Rule = { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['*'] };
const MAY_DELETE_PODS: Rule = { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'delete'] };

const newImage = (image: string): Change => ({
  target: STS,
  type: 'Patch',
  content: { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } },
});

/** A namespace with StatefulSet db (3 pods, OrderedReady, Ready) and a deployer with `rules`. */
async function setOf(prefix: string, rules: Rule[]): Promise<{ ns: string; revision: string }> {
  const ns = await testNamespace(clients.admin, prefix, { deployer: rules });
  await clients.admin.create(statefulSet(ns, 'db', POD_IMAGES.ready));
  const { revision } = await readyWith(clients.admin, ns, 'db', POD_IMAGES.ready);
  return { ns, revision };
}

const controller = <T>(ns: string, body: () => Promise<T>): Promise<T> =>
  withController({ kubeconfig: clients.kubeconfigs.controller, namespace: ns, logLevel: 'info' }, body);

describe('a StatefulSet rolled back from a crash-looping release', () => {
  it('ends RolledBack with its old pods Ready: the stuck pod of the bad revision is deleted', async () => {
    const { ns, revision } = await setOf('fr-sts', [MAY_CHANGE_SETS, MAY_DELETE_PODS]);
    await controller(ns, async () => {
      // health.timeout bounds each check: without the forced rollback, the rollback's check
      // waits all of it for a pod that never comes, and ends Failed/RollbackUnhealthy.
      await clients.admin.create(
        transaction(ns, 'release', [newImage(POD_IMAGES.crashLoop)], { health: { timeout: '60s' } }),
      );
      const txn = await waitForPhase(clients.admin, ns, 'release', 'RolledBack', 150_000);
      expect(txn.status?.health).toMatchObject({ check: 'Rollback', result: 'Healthy' });
      const after = await readyWith(clients.admin, ns, 'db', POD_IMAGES.ready);
      expect(after.revision).toBe(revision);
      const events = await eventually(async () => {
        const all = await transactionEvents(clients.admin, ns);
        expect(all.some((e) => e.startsWith('ForcedRollback'))).toBe(true);
        return all;
      });
      const forced = events.filter((e) => e.startsWith('ForcedRollback'));
      // Only the pod the set was stuck on: db-2, the first one OrderedReady rolled.
      expect(forced).toHaveLength(1);
      expect(forced[0]).toContain(`pod ${ns}/db-2`);
      expect(forced[0]).toContain('CrashLoopBackOff');
    });
  }, 300_000);

  it('ends Failed at once, saying what to do, when the ServiceAccount may not delete pods', async () => {
    const { ns } = await setOf('fr-sts-rbac', [MAY_CHANGE_SETS]);
    await controller(ns, async () => {
      // Ten minutes of health.timeout: ending within waitForPhase's wait means it did not wait.
      await clients.admin.create(
        transaction(ns, 'release', [newImage(POD_IMAGES.crashLoop)], { health: { timeout: '10m' } }),
      );
      const txn = await waitForPhase(clients.admin, ns, 'release', 'Failed', 150_000);
      const ready = txn.status?.conditions?.find((c) => c.type === 'Ready');
      expect(ready?.reason).toBe('RollbackUnhealthy');
      expect(ready?.message).toContain(`pod ${ns}/db-2`);
      expect(ready?.message).toContain(`ServiceAccount ${ns}/deployer may not delete pods`);
      expect(ready?.message).toContain(`kubectl delete pod -n ${ns} db-2`);
      // The template is restored; only the stuck pod is left for a human.
      const pods = await statefulSetPods(clients.admin, ns, 'db');
      expect(pods.find((p) => p.name === 'db-2')?.image).toBe(POD_IMAGES.crashLoop);
    });
  }, 300_000);
});

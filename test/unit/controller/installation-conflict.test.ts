/**
 * Issue 34, round 4, item 3, at run time: a Transaction whose status another installation of this
 * instance wrote is not driven here while that one is alive (it holds a claim): it is marked,
 * once (condition InstallationConflict, a Warning Event, the metric). Once the other is gone, this
 * installation takes it over and drives it, its own status writes naming it.
 */
import { describe, expect, it } from 'vitest';
import { API_VERSION, KIND, type Transaction } from '../../../src/api/v1alpha1/index.ts';
import { Reconciler } from '../../../src/controller/reconciler.ts';
import {
  configMap,
  NAMESPACE,
  sagaWorld,
  stored,
  transaction,
  updateConfigMap,
} from './stages/saga-fixture.ts';

const ref = (name: string) => ({ apiVersion: API_VERSION, kind: KIND, name, namespace: NAMESPACE });
const conflictOf = (txn: Transaction) =>
  txn.status?.conditions?.find((c) => c.type === 'InstallationConflict');

/** A world whose Transaction `deploy` was last written by the installation in janus-b. */
function writtenElsewhere(live: { value: boolean }) {
  const world = sagaWorld();
  let conflicts = 0;
  world.deps.isLiveInstallation = (namespace) => namespace === 'janus-b' && live.value;
  world.deps.metrics = { ...world.deps.metrics, installationConflict: () => void conflicts++ };
  world.api.put(configMap('a', { mode: 'blue' }));
  transaction(world, 'deploy', [updateConfigMap('a', { mode: 'green' })]);
  world.api.setStatus(ref('deploy'), { phase: 'Pending', installation: 'janus-b' });
  return { world, conflicts: () => conflicts };
}

describe('a Transaction another installation of this instance wrote', () => {
  it('is marked once and not driven while that installation is alive', async () => {
    const live = { value: true };
    const { world, conflicts } = writtenElsewhere(live);
    const reconciler = new Reconciler(world.deps);

    const result = await reconciler.reconcile(stored(world, 'deploy'));
    expect(result.requeueAfterMs).toBeGreaterThan(0);
    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('Pending');
    expect(txn.status?.installation).toBe('janus-b');
    expect(conflictOf(txn)).toMatchObject({ status: 'True', reason: 'WrittenByAnotherInstallation' });
    expect(conflictOf(txn)?.message).toContain('written by the installation in namespace "janus-b"');
    expect(world.events).toEqual([
      expect.objectContaining({ type: 'Warning', reason: 'InstallationConflict' }),
    ]);
    expect(conflicts()).toBe(1);
    expect(
      world.api.get({ apiVersion: 'v1', kind: 'ConfigMap', name: 'a', namespace: NAMESPACE }),
    ).toMatchObject({
      data: { mode: 'blue' },
    });

    // Looked at again: nothing more written, no second Event, no second count.
    const writes = world.api.requests.filter((r) => r.method !== 'GET').length;
    await reconciler.reconcile(stored(world, 'deploy'));
    expect(world.api.requests.filter((r) => r.method !== 'GET').length).toBe(writes);
    expect(world.events).toHaveLength(1);
    expect(conflicts()).toBe(1);
  });

  it('is taken over once that installation is gone, and driven from then on as this one', async () => {
    const live = { value: true };
    const { world } = writtenElsewhere(live);
    const reconciler = new Reconciler(world.deps);
    await reconciler.reconcile(stored(world, 'deploy'));

    live.value = false;
    await reconciler.reconcile(stored(world, 'deploy'));
    const txn = stored(world, 'deploy');
    expect(txn.status?.installation).toBe('janus-system');
    expect(conflictOf(txn)).toBeUndefined();
    expect(txn.status?.phase).toBe('Committed');
    expect(world.events.map((e) => e.reason)).toContain('InstallationTakeover');
  });

  it('is driven as before when this installation wrote it, or one before installations were named', async () => {
    const world = sagaWorld();
    world.deps.isLiveInstallation = () => true;
    world.api.put(configMap('a', { mode: 'blue' }));
    transaction(world, 'deploy', [updateConfigMap('a', { mode: 'green' })]);
    world.api.setStatus(ref('deploy'), { phase: 'Pending' });
    await new Reconciler(world.deps).reconcile(stored(world, 'deploy'));
    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('Committed');
    expect(txn.status?.installation).toBe('janus-system');
    expect(world.events.map((e) => e.reason)).not.toContain('InstallationConflict');
  });
});

import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../../../src/api/v1alpha1/index.ts';
import { commit } from '../../../../src/controller/stages/commit.ts';
import { prepare } from '../../../../src/controller/stages/prepare.ts';
import { rollback } from '../../../../src/controller/stages/rollback.ts';
import { start } from '../../../../src/controller/stages/start.ts';
import {
  configMap,
  loseLock,
  NAMESPACE,
  type SagaWorld,
  sagaWorld,
  step,
  stored,
  transaction,
  updateConfigMap,
} from './saga-fixture.ts';

const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace: NAMESPACE });
const dataOf = (world: SagaWorld, name: string) =>
  world.api.get<ReturnType<typeof configMap>>(cm(name))?.data;
const ready = (txn: Transaction) => txn.status?.conditions?.find((c) => c.type === 'Ready');

/**
 * ConfigMaps a, b and c; a Transaction updating all three; someone else changed c after
 * prepare, so the commit stopped there: a and b committed, RollingBack.
 */
async function rollingBackWorld(): Promise<SagaWorld> {
  const world = sagaWorld();
  for (const name of ['a', 'b', 'c']) world.api.put(configMap(name, { mode: 'blue' }));
  transaction(
    world,
    'deploy',
    ['a', 'b', 'c'].map((name) => updateConfigMap(name, { mode: 'green' })),
  );
  await step(world, 'deploy', start);
  await step(world, 'deploy', prepare);
  world.api.put(configMap('c', { mode: 'red' }));
  await step(world, 'deploy', commit);
  expect(stored(world, 'deploy').status?.phase).toBe('RollingBack');
  return world;
}

describe('rollback stage', () => {
  it('undoes every committed change from the rollback store: RolledBack', async () => {
    const world = await rollingBackWorld();

    await step(world, 'deploy', rollback);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('RolledBack');
    expect(ready(txn)?.message).toMatch(
      /^2 committed change\(s\) rolled back \(change 2: ConfigMap shop\/c was changed/,
    );
    expect(txn.status?.items?.map((i) => i.rolledBack)).toEqual([true, true, false]);
    expect([dataOf(world, 'a'), dataOf(world, 'b'), dataOf(world, 'c')]).toEqual([
      { mode: 'blue' },
      { mode: 'blue' },
      { mode: 'red' },
    ]);
  });

  it('leaves a target someone else changed after the commit alone, undoes the others: Failed, RollbackConflict', async () => {
    const world = await rollingBackWorld();
    world.api.put(configMap('b', { mode: 'purple' }));

    await step(world, 'deploy', rollback);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('Failed');
    expect(ready(txn)?.reason).toBe('RollbackConflict');
    expect(ready(txn)?.message).toBe(
      'left as they are because someone else changed them after commit: ConfigMap shop/b; see `janus recover deploy -n shop`',
    );
    expect(txn.status?.items?.map((i) => [i.rolledBack, i.conflict ?? false])).toEqual([
      [true, false],
      [false, true],
      [false, false],
    ]);
    expect(txn.status?.nextRecoveryAt).toBeUndefined(); // a conflict waits for a human
    expect(dataOf(world, 'a')).toEqual({ mode: 'blue' });
    expect(dataOf(world, 'b')).toEqual({ mode: 'purple' });
    expect(world.events).toContainEqual(
      expect.objectContaining({ type: 'Warning', reason: 'RollbackConflict' }),
    );
  });

  it('stops at the rollback deadline, saying what is left, and schedules a recovery', async () => {
    const world = await rollingBackWorld();
    world.clock.now = Date.parse(stored(world, 'deploy').status?.deadline ?? '') + 1;

    await step(world, 'deploy', rollback);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('Failed');
    expect(ready(txn)?.reason).toBe('RollbackFailed');
    expect(ready(txn)?.message).toMatch(
      /^rollback stopped: the rollback deadline passed; not rolled back yet: ConfigMap shop\/a, ConfigMap shop\/b; /,
    );
    expect(txn.status?.nextRecoveryAt).toBeDefined();
    expect(dataOf(world, 'a')).toEqual({ mode: 'green' });
  });

  it('waits in RollingBack while another transaction holds a lock it needs', async () => {
    const world = await rollingBackWorld();
    loseLock(world, 'deploy', 1);

    const result = await step(world, 'deploy', rollback);

    expect(result).toEqual({ requeueAfterMs: expect.any(Number) });
    const after = stored(world, 'deploy');
    expect(after.status?.phase).toBe('RollingBack');
    expect(after.status?.conditions?.find((c) => c.type === 'Reconciling')?.reason).toBe('LockWait');
    expect(dataOf(world, 'b')).toEqual({ mode: 'green' });
  });
});

import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../../../src/api/v1alpha1/index.ts';
import { commit } from '../../../../src/controller/stages/commit.ts';
import { prepare } from '../../../../src/controller/stages/prepare.ts';
import { start } from '../../../../src/controller/stages/start.ts';
import { KubeApiError } from '../../../../src/kube/errors.ts';
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

const MINUTE = 60_000;
const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace: NAMESPACE });
const reasonOf = (txn: Transaction) => txn.status?.conditions?.find((c) => c.type === 'Ready')?.reason;
const messageOf = (txn: Transaction) => txn.status?.conditions?.find((c) => c.type === 'Ready')?.message;

/** Two ConfigMaps, a Transaction updating both, started and prepared (phase Committing). */
async function preparedWorld(): Promise<SagaWorld> {
  const world = sagaWorld();
  world.api.put(configMap('a', { mode: 'blue' }));
  world.api.put(configMap('b', { mode: 'blue' }));
  transaction(world, 'deploy', [
    updateConfigMap('a', { mode: 'green' }),
    updateConfigMap('b', { mode: 'green' }),
  ]);
  await step(world, 'deploy', start);
  await step(world, 'deploy', prepare);
  expect(stored(world, 'deploy').status?.phase).toBe('Committing');
  return world;
}

describe('commit stage', () => {
  it('applies every change in order and ends Committed when no target is gated', async () => {
    const world = await preparedWorld();

    const result = await step(world, 'deploy', commit);

    expect('txn' in result && result.txn.status?.phase).toBe('Committed');
    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('Committed');
    expect(reasonOf(txn)).toBe('Committed');
    expect(messageOf(txn)).toBe('2/2 changes committed: Update ConfigMap a, Update ConfigMap b');
    expect(txn.status?.items?.map((i) => [i.committed, i.error])).toEqual([
      [true, ''],
      [true, ''],
    ]);
    expect(world.api.get<ReturnType<typeof configMap>>(cm('a'))?.data).toEqual({ mode: 'green' });
    expect(world.api.get<ReturnType<typeof configMap>>(cm('b'))?.data).toEqual({ mode: 'green' });
    expect(txn.status?.items?.[0]?.committedResourceVersion).toBe(
      world.api.get(cm('a'))?.metadata.resourceVersion,
    );
  });

  it('rolls back on a conflict, with a fresh deadline of the whole timeout from now', async () => {
    const world = await preparedWorld();
    world.api.put(configMap('b', { mode: 'red' })); // someone else, after prepare
    world.clock.now += 10 * MINUTE;

    await step(world, 'deploy', commit);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('RollingBack');
    expect(reasonOf(txn)).toBe('Conflict');
    expect(messageOf(txn)).toBe(
      'change 1: ConfigMap shop/b was changed by someone else after prepare; rolling back 1 committed change(s)',
    );
    expect(txn.status?.deadline).toBe(new Date(world.clock.now + 30 * MINUTE).toISOString());
    expect(txn.status?.items?.map((i) => i.committed)).toEqual([true, false]);
    expect(txn.status?.items?.[1]?.error).toContain('changed by someone else');
    expect(world.api.get<ReturnType<typeof configMap>>(cm('b'))?.data).toEqual({ mode: 'red' });
  });

  it('fails at once on a conflict at the first change: nothing to roll back', async () => {
    const world = await preparedWorld();
    world.api.put(configMap('a', { mode: 'red' }));

    await step(world, 'deploy', commit);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('Failed');
    expect(reasonOf(txn)).toBe('Conflict');
    expect(world.api.get<ReturnType<typeof configMap>>(cm('b'))?.data).toEqual({ mode: 'blue' });
  });

  it('rolls back what was committed when the API refuses a change (CommitFailed)', async () => {
    const world = await preparedWorld();
    world.api.before = (req) => {
      if (req.method === 'PUT' && req.path.endsWith('/configmaps/b') && !req.query?.dryRun) {
        throw new KubeApiError(req.method, req.path, 422, {
          reason: 'Invalid',
          message: 'data.mode: denied',
        });
      }
    };

    await step(world, 'deploy', commit);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('RollingBack');
    expect(reasonOf(txn)).toBe('CommitFailed');
    expect(messageOf(txn)).toBe(
      'change 1 (Update ConfigMap shop/b): update refused: Invalid: data.mode: denied; rolling back 1 committed change(s)',
    );
  });

  it('ends in Timeout when the deadline passed before a change was committed', async () => {
    const world = await preparedWorld();
    const deadline = Date.parse(stored(world, 'deploy').status?.deadline ?? '');
    world.clock.now = deadline + 1;

    await step(world, 'deploy', commit);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('Failed');
    expect(reasonOf(txn)).toBe('Timeout');
    expect(messageOf(txn)).toBe('the deadline passed before change 0 was committed');
    expect(world.api.get<ReturnType<typeof configMap>>(cm('a'))?.data).toEqual({ mode: 'blue' });
  });

  it('aborts when a lock was lost (taken by someone else while this controller was not running)', async () => {
    const world = await preparedWorld();
    loseLock(world, 'deploy', 0);

    await step(world, 'deploy', commit);

    const after = stored(world, 'deploy');
    expect(after.status?.phase).toBe('Failed');
    expect(reasonOf(after)).toBe('LockLost');
    expect(messageOf(after)).toMatch(/^change 0: .*now held by shop\/other/);
    expect(world.api.get<ReturnType<typeof configMap>>(cm('a'))?.data).toEqual({ mode: 'blue' });
  });
});

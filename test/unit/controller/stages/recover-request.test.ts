/**
 * `janus recover` restores a conflicted target and asks with retry-rollback; the controller, the
 * only writer of the status, re-checks the conflicts on that request, finds the target already
 * as it was before the transaction, and ends RolledBack. Without the request a conflict is
 * never retried.
 */
import { describe, expect, it } from 'vitest';
import { REQUEST_ANNOTATIONS } from '../../../../src/api/requests.ts';
import { FINALIZER } from '../../../../src/api/v1alpha1/index.ts';
import { commit } from '../../../../src/controller/stages/commit.ts';
import { beginRollback } from '../../../../src/controller/stages/lifecycle.ts';
import { prepare } from '../../../../src/controller/stages/prepare.ts';
import { rollback } from '../../../../src/controller/stages/rollback.ts';
import { start } from '../../../../src/controller/stages/start.ts';
import { decide } from '../../../../src/saga/decide.ts';
import {
  configMap,
  NAMESPACE,
  type SagaWorld,
  sagaWorld,
  step,
  stored,
  transaction,
  updateConfigMap,
} from './saga-fixture.ts';

const dataOf = (world: SagaWorld, name: string) =>
  world.api.get<ReturnType<typeof configMap>>({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name,
    namespace: NAMESPACE,
  })?.data;

function annotate(world: SagaWorld, name: string, annotation: string, value: string): void {
  const txn = stored(world, name);
  world.api.put({
    ...txn,
    metadata: { ...txn.metadata, annotations: { ...txn.metadata.annotations, [annotation]: value } },
  });
}

/** Takes the step decide() picks, for the steps a request leads to. */
async function reconcile(world: SagaWorld, name: string): Promise<string> {
  const next = decide(stored(world, name), world.clock.now);
  if (next.do === 'beginRollback')
    await step(world, name, (run) => beginRollback(run, next.cause, next.consumeAnnotation));
  else if (next.do === 'rollback') await step(world, name, rollback);
  return next.do === 'beginRollback' ? `beginRollback ${next.cause}` : next.do;
}

/** a and b updated to green and Committed; then someone else changed b; a rollback request: Failed, b a conflict. */
async function failedInConflict(): Promise<SagaWorld> {
  const world = sagaWorld();
  for (const name of ['a', 'b']) world.api.put(configMap(name, { mode: 'blue' }));
  transaction(
    world,
    'deploy',
    ['a', 'b'].map((name) => updateConfigMap(name, { mode: 'green' })),
  );
  // With the controller's finalizer, as decide() expects of a transaction it has started.
  const created = stored(world, 'deploy');
  world.api.put({ ...created, metadata: { ...created.metadata, finalizers: [FINALIZER] } });
  for (const stage of [start, prepare, commit]) await step(world, 'deploy', stage);
  expect(stored(world, 'deploy').status?.phase).toBe('Committed');
  world.api.put(configMap('b', { mode: 'purple' }));
  annotate(world, 'deploy', REQUEST_ANNOTATIONS.rollback, 'broke checkout');
  expect(await reconcile(world, 'deploy')).toBe('beginRollback RollbackRequested');
  expect(await reconcile(world, 'deploy')).toBe('rollback');
  const failed = stored(world, 'deploy');
  expect(failed.status?.phase).toBe('Failed');
  expect(failed.status?.items?.map((i) => [i.rolledBack, i.conflict ?? false])).toEqual([
    [true, false],
    [false, true],
  ]);
  return world;
}

describe('a retry-rollback request after janus recover restored a conflict', () => {
  it('re-checks the conflict, finds it restored, and ends RolledBack', async () => {
    const world = await failedInConflict();
    // What recover --apply writes as the ServiceAccount: the prior state over the current object.
    world.api.put(configMap('b', { mode: 'blue' }));
    annotate(world, 'deploy', REQUEST_ANNOTATIONS['retry-rollback'], 'janus recover by alice');

    expect(await reconcile(world, 'deploy')).toBe('beginRollback RollbackRetried');
    expect(
      stored(world, 'deploy').metadata.annotations?.[REQUEST_ANNOTATIONS['retry-rollback']],
    ).toBeUndefined();
    expect(await reconcile(world, 'deploy')).toBe('rollback');

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('RolledBack');
    expect(txn.status?.items?.map((i) => [i.rolledBack, i.conflict ?? false, i.error ?? ''])).toEqual([
      [true, false, ''],
      [true, false, ''],
    ]);
    expect(txn.status?.conditions?.find((c) => c.type === 'RolledBack')?.message).toContain(
      'retry-rollback annotation: janus recover by alice',
    );
    expect(dataOf(world, 'b')).toEqual({ mode: 'blue' });
  });

  it('leaves a conflict nobody restored as it is: Failed again, the other writer keeps their change', async () => {
    const world = await failedInConflict();
    annotate(world, 'deploy', REQUEST_ANNOTATIONS['retry-rollback'], 'janus rollback');

    expect(await reconcile(world, 'deploy')).toBe('beginRollback RollbackRetried');
    expect(await reconcile(world, 'deploy')).toBe('rollback');

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('Failed');
    expect(txn.status?.items?.[1]).toMatchObject({ rolledBack: false, conflict: true });
    expect(dataOf(world, 'b')).toEqual({ mode: 'purple' });
  });

  it('without the request, a restored conflict is not retried: it waits for a human', async () => {
    const world = await failedInConflict();
    world.api.put(configMap('b', { mode: 'blue' }));
    expect(decide(stored(world, 'deploy'), world.clock.now + 3_600_000)).toEqual({ do: 'cleanup' });
  });
});

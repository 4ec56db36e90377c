import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../../../src/api/v1alpha1/index.ts';
import { commit } from '../../../../src/controller/stages/commit.ts';
import { prepare } from '../../../../src/controller/stages/prepare.ts';
import { rollback } from '../../../../src/controller/stages/rollback.ts';
import { start } from '../../../../src/controller/stages/start.ts';
import { verify } from '../../../../src/controller/stages/verify.ts';
import {
  configMap,
  deployment,
  loseLock,
  NAMESPACE,
  rollout,
  type SagaWorld,
  sagaWorld,
  step,
  stored,
  transaction,
  updateConfigMap,
  updateDeployment,
} from './saga-fixture.ts';

const MINUTE = 60_000;
const web = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: NAMESPACE };
const condition = (txn: Transaction, type: string) => txn.status?.conditions?.find((c) => c.type === type);
const statusPatches = (world: SagaWorld) =>
  world.api.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith('/status')).length;
const imageOf = (world: SagaWorld) =>
  (world.api.get(web) as unknown as { spec: { template: { spec: { containers: { image: string }[] } } } })
    .spec.template.spec.containers[0]?.image;

/** A Deployment rolled out at v1, and a Transaction moving it to v2, committed: the check waits (Verifying). */
async function verifyingWorld(): Promise<SagaWorld> {
  const world = sagaWorld();
  world.api.put(deployment('web', 'podinfo:v1'));
  world.api.setStatus(web, rollout.complete);
  transaction(world, 'deploy', [updateDeployment('web', 'podinfo:v2')], { health: { timeout: '2m' } });
  await step(world, 'deploy', start);
  await step(world, 'deploy', prepare);
  const entered = await step(world, 'deploy', commit);
  expect(entered).toEqual({ requeueAfterMs: expect.any(Number) });
  const txn = stored(world, 'deploy');
  expect(txn.status?.phase).toBe('Verifying');
  expect(condition(txn, 'Healthy')?.status).toBe('False');
  expect(imageOf(world)).toBe('podinfo:v2');
  return world;
}

describe('verify stage: the commit check', () => {
  it('keeps waiting in Verifying, writing nothing while nothing changed', async () => {
    const world = await verifyingWorld();
    const before = statusPatches(world);

    const result = await step(world, 'deploy', verify);

    expect(result).toEqual({ requeueAfterMs: expect.any(Number) });
    expect(statusPatches(world)).toBe(before);
  });

  it('healthy → Committed, Healthy=True, the check recorded Healthy', async () => {
    const world = await verifyingWorld();
    world.clock.now += 30_000;
    world.api.setStatus(web, rollout.complete);

    await step(world, 'deploy', verify);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('Committed');
    expect(condition(txn, 'Ready')?.message).toBe(
      '1/1 changes committed: Update Deployment web; 1 target(s) healthy after 30s',
    );
    expect(condition(txn, 'Healthy')).toMatchObject({ status: 'True', reason: 'TargetsHealthy' });
    expect(txn.status?.health).toMatchObject({ check: 'Commit', result: 'Healthy' });
    expect(world.released).toContain(`${NAMESPACE}/deploy`);
  });

  it('unhealthy → RollingBack with a fresh deadline, HealthCheckFailed', async () => {
    const world = await verifyingWorld();
    world.clock.now += 45_000;
    world.api.setStatus(web, rollout.stuck);

    await step(world, 'deploy', verify);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('RollingBack');
    expect(condition(txn, 'Ready')?.reason).toBe('HealthCheckFailed');
    expect(condition(txn, 'Ready')?.message).toMatch(
      /^Deployment shop\/web: rollout made no progress within 600s.* \(after 45s\); rolling back 1 committed change\(s\)$/,
    );
    expect(condition(txn, 'Healthy')).toMatchObject({ status: 'False', reason: 'HealthCheckFailed' });
    expect(txn.status?.health).toMatchObject({ check: 'Commit', result: 'Unhealthy' });
    expect(txn.status?.deadline).toBe(new Date(world.clock.now + 30 * MINUTE).toISOString());
    expect(world.events).toContainEqual(
      expect.objectContaining({ type: 'Warning', reason: 'HealthCheckFailed' }),
    );
  });

  it('still in progress at the check deadline → RollingBack, HealthCheckTimeout', async () => {
    const world = await verifyingWorld();
    world.api.setStatus(web, rollout.inProgress);
    world.clock.now = Date.parse(stored(world, 'deploy').status?.health?.deadline ?? '');

    await step(world, 'deploy', verify);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('RollingBack');
    expect(condition(txn, 'Ready')?.reason).toBe('HealthCheckTimeout');
    expect(condition(txn, 'Healthy')).toMatchObject({ status: 'False', reason: 'HealthCheckTimeout' });
    expect(txn.status?.health).toMatchObject({
      result: 'TimedOut',
      message: expect.stringMatching(/^not healthy within 2m0s: /),
    });
  });

  it('a target deleted during the check is unhealthy at once', async () => {
    const world = await verifyingWorld();
    world.api.remove(web);

    await step(world, 'deploy', verify);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('RollingBack');
    expect(condition(txn, 'Healthy')?.message).toMatch(/no longer exists \(deleted after the commit\)/);
  });
});

describe('verify stage: entering and leaving the check', () => {
  it('targets healthy at the first look: Committed in one status write, never Verifying', async () => {
    const world = sagaWorld();
    world.api.put(configMap('settings', { mode: 'blue' }));
    transaction(world, 'deploy', [updateConfigMap('settings', { mode: 'green' })], {
      health: { targets: 'All' },
    });
    await step(world, 'deploy', start);
    await step(world, 'deploy', prepare);
    const before = statusPatches(world);

    await step(world, 'deploy', commit);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('Committed');
    expect(condition(txn, 'Healthy')).toMatchObject({ status: 'True', reason: 'TargetsHealthy' });
    expect(statusPatches(world)).toBe(before + 1);
  });

  it('a lock lost during the commit check aborts: RollingBack, LockLost', async () => {
    const world = await verifyingWorld();
    loseLock(world, 'deploy', 0);

    await step(world, 'deploy', verify);

    const after = stored(world, 'deploy');
    expect(after.status?.phase).toBe('RollingBack');
    expect(condition(after, 'Ready')?.reason).toBe('LockLost');
    expect(condition(after, 'Ready')?.message).toMatch(/^while checking health: .*now held by shop\/other/);
    expect(world.released).toContain(`${NAMESPACE}/deploy`);
  });
});

describe('verify stage: the rollback check', () => {
  /** The commit check failed and the rollback restored v1: now the restored state is checked. */
  async function restoredWorld(): Promise<SagaWorld> {
    const world = await verifyingWorld();
    world.api.setStatus(web, rollout.stuck);
    await step(world, 'deploy', verify);
    const entered = await step(world, 'deploy', rollback);
    expect(entered).toEqual({ requeueAfterMs: expect.any(Number) });
    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('RollingBack');
    expect(txn.status?.health).toMatchObject({ check: 'Rollback' });
    expect(txn.status?.health?.completedAt).toBeUndefined();
    expect(imageOf(world)).toBe('podinfo:v1');
    return world;
  }

  it('healthy → RolledBack', async () => {
    const world = await restoredWorld();
    world.api.setStatus(web, rollout.complete);

    await step(world, 'deploy', verify);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('RolledBack');
    expect(condition(txn, 'Ready')?.message).toMatch(
      /^1 committed change\(s\) rolled back \(.*\); 1 target\(s\) healthy after 0s$/,
    );
    expect(txn.status?.health).toMatchObject({ check: 'Rollback', result: 'Healthy' });
  });

  it('unhealthy → Failed, RollbackUnhealthy', async () => {
    const world = await restoredWorld();
    world.api.setStatus(web, rollout.stuck);

    await step(world, 'deploy', verify);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('Failed');
    expect(condition(txn, 'Ready')?.reason).toBe('RollbackUnhealthy');
    expect(condition(txn, 'Ready')?.message).toMatch(
      /rolled back .*, but the restored state is not healthy: /,
    );
    expect(txn.status?.health).toMatchObject({ result: 'Unhealthy' });
  });

  it('timed out → Failed, RollbackUnhealthy', async () => {
    const world = await restoredWorld();
    world.api.setStatus(web, rollout.inProgress);
    world.clock.now = Date.parse(stored(world, 'deploy').status?.health?.deadline ?? '');

    await step(world, 'deploy', verify);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('Failed');
    expect(condition(txn, 'Ready')?.reason).toBe('RollbackUnhealthy');
    expect(txn.status?.health).toMatchObject({ result: 'TimedOut' });
  });
});

/**
 * The LockTable entries the stages write (docs/security.md, "Locks that block"): after the
 * Leases and before anything relies on them, saying what the holder does; released first on
 * every terminal path; a table that cannot be written leaves the locks advisory, one that has no
 * room is waited for. The policy that reads them is tested against the real API server
 * (test/cluster/security/locks-that-block.test.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  LOCK_TABLE_API_VERSION,
  LOCK_TABLE_KIND,
  LOCK_TABLE_NAME,
  type LockTable,
  TRANSACTION_UID_EXTRA,
} from '../../../../src/api/v1alpha1/index.ts';
import { LOCKS_NOT_BLOCKING } from '../../../../src/controller/locking.ts';
import { cleanup } from '../../../../src/controller/stages/lifecycle.ts';
import { prepare } from '../../../../src/controller/stages/prepare.ts';
import { start } from '../../../../src/controller/stages/start.ts';
import { KubeApiError } from '../../../../src/kube/errors.ts';
import type { KubeObject } from '../../../../src/kube/resources.ts';
import { lockTableKey } from '../../../../src/locks/lock-table.ts';
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

const other = {
  transaction: 'other',
  namespace: NAMESPACE,
  uid: 'uid-other',
  user: 'system:serviceaccount:shop:deploy-sa',
  phase: 'Committing',
};

const tableOf = (world: SagaWorld) =>
  world.api.get<LockTable & KubeObject>({
    apiVersion: LOCK_TABLE_API_VERSION,
    kind: LOCK_TABLE_KIND,
    name: LOCK_TABLE_NAME,
    namespace: NAMESPACE,
  });

const isTableWrite = (path: string) => path.endsWith(`/locktables/${LOCK_TABLE_NAME}`);

function prepared(world: SagaWorld) {
  world.api.put(configMap('a', { mode: 'blue' }));
  transaction(world, 'deploy', [updateConfigMap('a', { mode: 'green' })]);
  return step(world, 'deploy', start);
}

describe('LockTable entries', () => {
  it('are written once the Leases are held, before the targets are read, naming the holder', async () => {
    const world = sagaWorld();
    await prepared(world);

    await step(world, 'deploy', prepare);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('Committing');
    expect(tableOf(world)?.spec?.locks).toEqual({
      'configmaps/a': {
        transaction: 'deploy',
        namespace: NAMESPACE,
        uid: txn.metadata.uid,
        user: 'system:serviceaccount:shop:deploy-sa',
        phase: 'Committing',
      },
    });
    const order = world.api.requests
      .filter((r) => !r.dryRun)
      .map((r) =>
        r.path.endsWith('/leases') ? 'lease' : isTableWrite(r.path) ? 'table' : r.as ? 'target' : undefined,
      )
      .filter(Boolean);
    expect(order).toEqual(['lease', 'table', 'target']);
    // The ServiceAccount's requests carry the Transaction's uid: the policy lets them through.
    const asServiceAccount = world.api.requests.filter((r) => r.as);
    expect(asServiceAccount.length).toBeGreaterThan(0);
    for (const r of asServiceAccount) expect(r.extra).toEqual({ [TRANSACTION_UID_EXTRA]: txn.metadata.uid });
  });

  it('go first on release; a table left empty goes with them', async () => {
    const world = sagaWorld();
    await prepared(world);
    await step(world, 'deploy', prepare);
    world.api.requests.splice(0);

    await step(world, 'deploy', cleanup);

    const writes = world.api.requests.filter((r) => r.method !== 'GET').map((r) => [r.method, r.path]);
    const table = `/apis/tx.janus.io/v1alpha1/namespaces/${NAMESPACE}/locktables/janus-locks`;
    expect(writes.slice(0, 2)).toEqual([
      ['PATCH', table],
      ['DELETE', table],
    ]);
    expect(writes[2]?.[0]).toBe('DELETE');
    expect(writes[2]?.[1]).toMatch(/\/leases$/);
    expect(tableOf(world)).toBeUndefined();
  });

  it('keep a table another transaction wrote to meanwhile: the delete is conditional', async () => {
    const world = sagaWorld();
    await prepared(world);
    await step(world, 'deploy', prepare);
    world.api.before = (req) => {
      if (req.method !== 'DELETE' || !isTableWrite(req.path)) return;
      world.api.before = () => {};
      // Between the release's apply and its delete, another transaction takes a lock here.
      const current = tableOf(world);
      world.api.put({ ...current, spec: { locks: { 'configmaps/b': other } } } as LockTable & KubeObject);
    };

    await step(world, 'deploy', cleanup);

    expect(tableOf(world)?.spec?.locks).toEqual({ 'configmaps/b': other });
  });

  it('that cannot be written (no LockTable CRD) leave the locks advisory: prepared, and said once', async () => {
    const world = sagaWorld();
    await prepared(world);
    world.api.before = (req) => {
      if (isTableWrite(req.path))
        throw new KubeApiError(req.method, req.path, 404, {
          reason: 'NotFound',
          message: 'the server could not find the requested resource',
        });
    };

    await step(world, 'deploy', prepare);

    expect(stored(world, 'deploy').status?.phase).toBe('Committing');
    expect(world.events.filter((e) => e.reason === LOCKS_NOT_BLOCKING)).toEqual([
      expect.objectContaining({
        type: 'Warning',
        message: expect.stringContaining(
          `the API server will not refuse others' writes to the targets in namespace ${NAMESPACE}`,
        ),
      }),
    ]);
  });

  it('in a table without room: the transaction waits, its Leases held, nothing read', async () => {
    const world = sagaWorld();
    await prepared(world);
    world.api.before = (req) => {
      if (isTableWrite(req.path))
        throw new KubeApiError(req.method, req.path, 422, {
          reason: 'Invalid',
          message:
            'LockTable.tx.janus.io "janus-locks" is invalid: spec.locks: Too many: 2049: must have at most 2048 items',
        });
    };

    await step(world, 'deploy', prepare);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('Preparing');
    const reconciling = txn.status?.conditions?.find((c) => c.type === 'Reconciling');
    expect(reconciling?.reason).toBe('LockWait');
    expect(reconciling?.message).toContain(
      `waiting for room: LockTable ${NAMESPACE}/janus-locks has no room`,
    );
    expect(world.api.requests.some((r) => r.as && !r.dryRun)).toBe(false);
  });
});

describe('lockTableKey', () => {
  it('names a target as an admission request does: resource, group, name', () => {
    expect(lockTableKey({ group: 'apps', resource: 'deployments', name: 'web' })).toBe(
      'deployments.apps/web',
    );
    expect(lockTableKey({ group: '', resource: 'configmaps', name: 'app-config' })).toBe(
      'configmaps/app-config',
    );
    expect(
      lockTableKey({ group: 'rbac.authorization.k8s.io', resource: 'clusterroles', name: 'system:view' }),
    ).toBe('clusterroles.rbac.authorization.k8s.io/system:view');
  });
});

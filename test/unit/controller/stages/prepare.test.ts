import { describe, expect, it } from 'vitest';
import type { AnalysisRef, Transaction } from '../../../../src/api/v1alpha1/index.ts';
import { prepare } from '../../../../src/controller/stages/prepare.ts';
import { start } from '../../../../src/controller/stages/start.ts';
import {
  configMap,
  NAMESPACE,
  sagaWorld,
  step,
  stored,
  transaction,
  updateConfigMap,
} from './saga-fixture.ts';

const ready = (txn: Transaction) => txn.status?.conditions?.find((c) => c.type === 'Ready');
const leases = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' };

describe('prepare stage', () => {
  it('dry-runs as the ServiceAccount, locks, snapshots: Committing, nothing changed yet', async () => {
    const world = sagaWorld();
    world.api.put(configMap('a', { mode: 'blue' }));
    transaction(world, 'deploy', [updateConfigMap('a', { mode: 'green' })]);
    await step(world, 'deploy', start);

    await step(world, 'deploy', prepare);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('Committing');
    expect(txn.status?.rollbackRef).toBeTruthy();
    const prior = world.api.get<ReturnType<typeof configMap>>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'a',
      namespace: NAMESPACE,
    });
    expect(txn.status?.items?.[0]).toMatchObject({
      prepared: true,
      resourceVersion: prior?.metadata.resourceVersion,
    });
    const [namespace, name] = (txn.status?.items?.[0]?.lease ?? '').split('/');
    expect(world.api.get({ ...leases, name: name ?? '', namespace })).toBeDefined();
    expect(prior?.data).toEqual({ mode: 'blue' });
    const dryRuns = world.api.requests.filter((r) => r.dryRun);
    expect(dryRuns).toEqual([
      expect.objectContaining({ method: 'PUT', as: 'system:serviceaccount:shop:deploy-sa' }),
    ]);
  });

  it("fails a check's address the settings do not allow, and another team's template, before any dry run or lock", async () => {
    const world = sagaWorld(); // settings: no address; templates of shop and janus-system
    world.api.put(configMap('a', { mode: 'blue' }));
    const analysed = (analysis: AnalysisRef[]) => ({
      health: { stableFor: '1m', analysis },
    });
    const metadata = {
      check: { name: 'metadata', http: { url: 'http://169.254.169.254/latest/meta-data/' } },
    };
    transaction(world, 'ssrf', [updateConfigMap('a', { mode: 'green' })], analysed([metadata]));
    const foreign = { templateRef: { name: 'errors', namespace: 'payments' } };
    transaction(world, 'foreign', [updateConfigMap('a', { mode: 'green' })], analysed([foreign]));
    for (const name of ['ssrf', 'foreign']) await step(world, name, start);

    for (const name of ['ssrf', 'foreign']) await step(world, name, prepare);

    const ssrf = stored(world, 'ssrf');
    expect(ssrf.status?.phase).toBe('Failed');
    expect(ready(ssrf)?.reason).toBe('AnalysisNotAllowed');
    expect(ready(ssrf)?.message).toContain('does not query http://169.254.169.254/latest/meta-data/');
    const foreignTxn = stored(world, 'foreign');
    expect(foreignTxn.status?.phase).toBe('Failed');
    expect(ready(foreignTxn)?.message).toContain('AnalysisTemplate "payments/errors" may not be used');
    expect(world.api.requests.filter((r) => r.dryRun || r.path.includes('analysistemplates'))).toEqual([]);
    expect(world.api.requests.some((r) => r.method === 'POST' && r.path.endsWith('/leases'))).toBe(false);
  });

  it('fails when the target of an Update does not exist, holding no lock', async () => {
    const world = sagaWorld();
    transaction(world, 'deploy', [updateConfigMap('missing', { mode: 'green' })]);
    await step(world, 'deploy', start);

    await step(world, 'deploy', prepare);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('Failed');
    expect(ready(txn)?.reason).toBe('TargetNotFound');
    expect(world.api.requests.some((r) => r.method === 'POST' && r.path.endsWith('/leases'))).toBe(false);
  });

  it('fails in Timeout when the deadline passed before every target was locked', async () => {
    const world = sagaWorld();
    world.api.put(configMap('a', { mode: 'blue' }));
    transaction(world, 'deploy', [updateConfigMap('a', { mode: 'green' })], { timeout: '1m' });
    await step(world, 'deploy', start);
    world.clock.now += 61_000;

    await step(world, 'deploy', prepare);

    const txn = stored(world, 'deploy');
    expect(txn.status?.phase).toBe('Failed');
    expect(ready(txn)?.reason).toBe('Timeout');
  });
});

/** The pure parts of the change strategies: what each type sends, requires, and recognises. */
import { describe, expect, it } from 'vitest';
import type { Change, ChangeType } from '../../../src/api/v1alpha1/index.ts';
import { beforeCreation, type ChangeItem, PLANNED_UID } from '../../../src/changes/change-context.ts';
import { desiredObject } from '../../../src/changes/desired.ts';
import { targetExists, targetNotFound } from '../../../src/changes/prepare-verdicts.ts';
import { strategyOf } from '../../../src/changes/strategy.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { fieldManager } from '../../../src/saga/targets.ts';
import { txnIn } from '../saga/transaction-fixture.ts';

const APPLIED_BY = 'tx.janus.io/applied-by';
const txn = txnIn();

function itemOf(type: ChangeType, content: Change['content'] = { data: { mode: 'blue' } }): ChangeItem {
  return {
    index: 1,
    change: { type, target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'app-config' }, content },
    target: { apiVersion: 'v1', group: '', kind: 'ConfigMap', name: 'app-config', namespace: 'shop' },
  };
}

const configMap = (data: Record<string, string>, annotations?: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'app-config',
    namespace: 'shop',
    resourceVersion: '7',
    ...(annotations && { annotations }),
  },
  data,
});

describe('desiredObject', () => {
  it("sends the content with the target's identity and this change's stamp, never a status", () => {
    const item = itemOf('Update', {
      metadata: { name: 'ignored', labels: { app: 'web' }, annotations: { team: 'shop' } },
      data: { mode: 'blue' },
      status: { phase: 'made up' },
    });
    expect(desiredObject(txn, item)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'app-config',
        namespace: 'shop',
        labels: { app: 'web' },
        annotations: { team: 'shop', [APPLIED_BY]: `shop/deploy-v2@${txn.metadata.uid}#1` },
      },
      data: { mode: 'blue' },
    });
  });

  it('carries a resourceVersion only when the write is conditional on one', () => {
    expect(desiredObject(txn, itemOf('Patch')).metadata).not.toHaveProperty('resourceVersion');
    expect(desiredObject(txn, itemOf('Patch'), '42').metadata.resourceVersion).toBe('42');
  });

  it('leaves the namespace out for a cluster-scoped target', () => {
    const item = { ...itemOf('Create'), target: { ...itemOf('Create').target, namespace: undefined } };
    expect(desiredObject(txn, item).metadata).not.toHaveProperty('namespace');
  });
});

describe('beforeCreation', () => {
  it('stands in for the missing uid with one as long, so the stamp and field manager are as long', () => {
    const { uid: _uid, ...metadata } = txn.metadata;
    const planned = beforeCreation({ ...txn, metadata });
    expect(planned.metadata.uid).toBe(PLANNED_UID);
    expect(PLANNED_UID).toHaveLength((txn.metadata.uid ?? '').length);
    const stamp = (t: typeof txn) => desiredObject(t, itemOf('Create')).metadata.annotations?.[APPLIED_BY];
    expect(stamp(planned)).toHaveLength(stamp(txn)?.length ?? 0);
    expect(fieldManager(planned)).toHaveLength(fieldManager(txn).length);
  });

  it('keeps a real uid', () => {
    expect(beforeCreation(txn)).toBe(txn);
  });
});

describe('what prepare requires of the target', () => {
  it.each([
    ['Create', 'absent'],
    ['Update', 'present'],
    ['Patch', 'present'],
    ['Delete', 'either'],
  ] as const)('%s: %s', (type, existence) => {
    expect(strategyOf(itemOf(type)).existence).toBe(existence);
  });

  it('words a refusal as the status does', () => {
    expect(targetExists(itemOf('Create'))).toEqual({
      reason: 'TargetExists',
      message: 'change 1: cannot create ConfigMap shop/app-config: it already exists',
    });
    expect(targetNotFound(itemOf('Patch'))).toEqual({
      reason: 'TargetNotFound',
      message: 'change 1: cannot patch ConfigMap shop/app-config: it does not exist',
    });
  });
});

describe('recognising our own write (probe)', () => {
  const ours = `shop/deploy-v2@${txn.metadata.uid}#1`;

  it.each(['Create', 'Update', 'Patch'] as const)(
    '%s: the object carries the stamp of this change',
    (type) => {
      const strategy = strategyOf(itemOf(type));
      expect(strategy.isApplied(txn, itemOf(type), configMap({}, { [APPLIED_BY]: ours }))).toBe(true);
      const otherChange = `shop/deploy-v2@${txn.metadata.uid}#0`;
      expect(strategy.isApplied(txn, itemOf(type), configMap({}, { [APPLIED_BY]: otherChange }))).toBe(false);
      expect(strategy.isApplied(txn, itemOf(type), configMap({}))).toBe(false);
      expect(strategy.isApplied(txn, itemOf(type), undefined)).toBe(false);
    },
  );

  it('Delete: the object is gone', () => {
    const strategy = strategyOf(itemOf('Delete'));
    expect(strategy.isApplied(txn, itemOf('Delete'), undefined)).toBe(true);
    expect(strategy.isApplied(txn, itemOf('Delete'), configMap({}, { [APPLIED_BY]: ours }))).toBe(false);
  });
});

describe('recognising an undo already made', () => {
  const prior = configMap({ mode: 'green', kept: 'yes' });

  it.each(['Create', 'Update', 'Delete'] as const)('%s: the target holds the prior content', (type) => {
    const strategy = strategyOf(itemOf(type));
    expect(
      strategy.isUndone(txn, itemOf(type), prior, {
        ...prior,
        metadata: { ...prior.metadata, resourceVersion: '9' },
      }),
    ).toBe(true);
    expect(strategy.isUndone(txn, itemOf(type), prior, configMap({ mode: 'green' }))).toBe(false);
  });

  it("Patch: only the fields the patch set must hold their prior values; others' fields may differ", () => {
    const strategy = strategyOf(itemOf('Patch'));
    expect(
      strategy.isUndone(txn, itemOf('Patch'), prior, configMap({ mode: 'green', kept: 'changed' })),
    ).toBe(true);
    expect(strategy.isUndone(txn, itemOf('Patch'), prior, configMap({ mode: 'blue', kept: 'yes' }))).toBe(
      false,
    );
  });
});

import { describe, expect, it } from 'vitest';
import type { Change, Transaction } from '../../../src/api/v1alpha1/index.ts';
import {
  ANNOTATION_APPLIED_BY,
  appliedByValue,
  changeVerb,
  committedFieldManager,
  describeTarget,
  duplicateTargets,
  fieldManager,
  groupOf,
  isAppliedBy,
  type ResolvedTarget,
  resolveTarget,
  serviceAccountUser,
  sourceFieldManager,
  sourceManagerOf,
  statusTarget,
  targetKey,
} from '../../../src/saga/targets.ts';
import { txnIn } from './transaction-fixture.ts';

const txn: Transaction = txnIn();
const cm = (name: string, namespace?: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  name,
  ...(namespace && { namespace }),
});

describe('groupOf', () => {
  it('is empty for the core group and the part before the slash otherwise', () => {
    expect(groupOf('v1')).toBe('');
    expect(groupOf('apps/v1')).toBe('apps');
    expect(groupOf('rbac.authorization.k8s.io/v1')).toBe('rbac.authorization.k8s.io');
  });
});

describe('resolveTarget', () => {
  it("defaults a namespaced target's namespace to the Transaction's", () => {
    expect(resolveTarget(cm('app-config'), 'shop', true)).toEqual({
      apiVersion: 'v1',
      group: '',
      kind: 'ConfigMap',
      name: 'app-config',
      namespace: 'shop',
    });
  });

  it('keeps an explicit namespace', () => {
    expect(resolveTarget(cm('app-config', 'billing'), 'shop', true).namespace).toBe('billing');
  });

  it('gives a cluster-scoped target no namespace, not even the Transaction’s', () => {
    const target = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'reader' };
    expect(resolveTarget(target, 'shop', false)).toEqual({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      group: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'reader',
      namespace: undefined,
    });
  });

  it('drops a namespace given for a cluster-scoped kind (the start stage reports it as an error)', () => {
    const target = { apiVersion: 'example.io/v1', kind: 'Tenant', name: 'acme', namespace: 'shop' };
    expect(resolveTarget(target, 'shop', false).namespace).toBeUndefined();
  });
});

describe('targetKey', () => {
  const deployment = (apiVersion: string, namespace = 'shop'): ResolvedTarget => ({
    apiVersion,
    group: groupOf(apiVersion),
    kind: 'Deployment',
    name: 'web',
    namespace,
  });

  it('treats versions of one group as one resource', () => {
    expect(targetKey(deployment('apps/v1'))).toBe(targetKey(deployment('apps/v1beta2')));
  });

  it('tells apart the same kind and name in different groups', () => {
    expect(targetKey(deployment('apps/v1'))).not.toBe(targetKey(deployment('example.io/v1')));
  });

  it('tells apart the same resource in different namespaces, and a cluster-scoped one', () => {
    const clusterScoped = { ...deployment('apps/v1'), namespace: undefined };
    const keys = new Set([
      targetKey(deployment('apps/v1', 'shop')),
      targetKey(deployment('apps/v1', 'billing')),
      targetKey(clusterScoped),
    ]);
    expect(keys.size).toBe(3);
  });

  it('tells apart kinds and names', () => {
    const a = deployment('apps/v1');
    expect(targetKey(a)).not.toBe(targetKey({ ...a, kind: 'StatefulSet' }));
    expect(targetKey(a)).not.toBe(targetKey({ ...a, name: 'api' }));
  });
});

describe('duplicateTargets', () => {
  const resolve = (targets: Change['target'][]) => targets.map((t) => resolveTarget(t, 'shop', true));

  it('finds none among distinct targets', () => {
    expect(duplicateTargets(resolve([cm('a'), cm('b'), cm('a', 'billing')]))).toBeUndefined();
    expect(duplicateTargets([])).toBeUndefined();
  });

  it('finds a target named once with and once without the defaulted namespace, naming both changes', () => {
    const message = duplicateTargets(resolve([cm('x'), cm('app-config'), cm('app-config', 'shop')]));
    expect(message).toBe(
      'changes 1 and 2 both target ConfigMap shop/app-config; each resource may appear in one change only',
    );
  });

  it('finds the same resource named through two versions of its group', () => {
    const message = duplicateTargets(
      resolve([
        { apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', name: 'web' },
        { apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', name: 'web' },
      ]),
    );
    expect(message).toContain('changes 0 and 1');
  });
});

describe('describeTarget and statusTarget', () => {
  it('name namespaced and cluster-scoped targets for people', () => {
    const ns = resolveTarget(cm('app-config'), 'shop', true);
    const cluster = resolveTarget(
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', name: 'reader' },
      'shop',
      false,
    );
    expect(describeTarget(ns)).toBe('ConfigMap shop/app-config');
    expect(describeTarget(cluster)).toBe('ClusterRole reader');
    expect(statusTarget(ns)).toBe('v1 ConfigMap shop/app-config');
  });
});

describe('applied-by annotation', () => {
  it('names the transaction by namespace, name, uid and the change index', () => {
    expect(ANNOTATION_APPLIED_BY).toBe('tx.janus.io/applied-by');
    expect(appliedByValue(txn, 2)).toBe('shop/deploy-v2@7f0c1a52-0000-4000-8000-000000000001#2');
  });

  it('recognises our own write of that change only', () => {
    const annotations = { [ANNOTATION_APPLIED_BY]: appliedByValue(txn, 2) };
    expect(isAppliedBy({ name: 'web', annotations }, txn, 2)).toBe(true);
    expect(isAppliedBy({ name: 'web', annotations }, txn, 1)).toBe(false);
  });

  it('does not mistake a re-created Transaction of the same name for the earlier one', () => {
    const earlier = { metadata: { ...txn.metadata, uid: 'uid-of-the-deleted-one' } };
    const annotations = { [ANNOTATION_APPLIED_BY]: appliedByValue(earlier, 0) };
    expect(isAppliedBy({ name: 'web', annotations }, txn, 0)).toBe(false);
  });

  it('is false for objects without annotations, or missing', () => {
    expect(isAppliedBy({ name: 'web' }, txn, 0)).toBe(false);
    expect(isAppliedBy(undefined, txn, 0)).toBe(false);
  });
});

describe('identities', () => {
  it('impersonates the ServiceAccount in the Transaction’s namespace', () => {
    expect(serviceAccountUser(txn)).toBe('system:serviceaccount:shop:deploy-sa');
  });

  it('gives every transaction a field manager of its own: janus:<name>@<uid>', () => {
    const uid = '6f1c1a8e-2b1d-4c55-9a55-0b4f5b0e9d11';
    const mine = { metadata: { ...txn.metadata, uid } };
    expect(fieldManager(mine)).toBe(`janus:deploy-v2@${uid}`);
    const sameNameElsewhere = {
      metadata: { ...txn.metadata, namespace: 'other', uid: uid.replace('6f', '70') },
    };
    expect(fieldManager(sameNameElsewhere)).not.toBe(fieldManager(mine));
  });

  it("keeps a long name's field manager within the API server's 128 characters, uid whole", () => {
    const uid = '6f1c1a8e-2b1d-4c55-9a55-0b4f5b0e9d11';
    const manager = fieldManager({ metadata: { name: 'x'.repeat(253), namespace: 'shop', uid } });
    expect(manager).toHaveLength(128);
    expect(manager.endsWith(`@${uid}`)).toBe(true);
  });

  it("commits and rolls back with the manager recorded at prepare, or 0.1's janus-<name> without one", () => {
    expect(
      committedFieldManager({ metadata: txn.metadata, status: { fieldManager: 'janus:deploy-v2@u' } }),
    ).toBe('janus:deploy-v2@u');
    expect(committedFieldManager({ metadata: txn.metadata, status: {} })).toBe('janus-deploy-v2');
  });

  it("gives a source's transactions one field manager, the source's: janus-source:<namespace>/<name>", () => {
    expect(sourceFieldManager('shop', 'web')).toBe('janus-source:shop/web');
    const fromSource = { metadata: txn.metadata, spec: { ...txn.spec, sourceRef: { name: 'web' } } };
    expect(sourceManagerOf(fromSource)).toBe('janus-source:shop/web');
    expect(sourceManagerOf(txn)).toBeUndefined();
  });

  it("keeps a source's manager within 128 characters and unique when its names are at their longest", () => {
    const namespace = 'n'.repeat(63);
    const a = sourceFieldManager(namespace, `${'s'.repeat(54)}a`);
    const b = sourceFieldManager(namespace, `${'s'.repeat(54)}b`);
    expect(a).toHaveLength(128);
    expect(b).toHaveLength(128);
    expect(a).not.toBe(b);
    expect(a.startsWith(`janus-source:${namespace}/sss`)).toBe(true);
    // Short enough: never hashed, so a manager is readable in kubectl's managedFields.
    expect(sourceFieldManager('n'.repeat(58), 's'.repeat(55))).toBe(
      `janus-source:${'n'.repeat(58)}/${'s'.repeat(55)}`,
    );
  });

  it('uses the lower-case change type as verb', () => {
    expect(changeVerb({ target: cm('a'), type: 'Delete' })).toBe('delete');
  });
});

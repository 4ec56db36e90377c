import { describe, expect, it } from 'vitest';
import { existingStoreVerdict } from '../../../src/rollback-store/store.ts';

const txn = { metadata: { name: 'deploy', namespace: 'shop', uid: 'uid-now' } };
const ownedBy = (name: string, uid: string, kind = 'Transaction') => ({
  apiVersion: 'tx.janus.io/v1alpha1',
  kind,
  name,
  uid,
  controller: true,
});

describe('existingStoreVerdict: an object already under the store name', () => {
  it('rewrites only its own store (same Transaction uid)', () => {
    expect(existingStoreVerdict({ ownerReferences: [ownedBy('deploy', 'uid-now')] }, txn).kind).toBe('own');
  });

  it('waits for the garbage collector on the store of a deleted Transaction of the same name', () => {
    const verdict = existingStoreVerdict({ ownerReferences: [ownedBy('deploy', 'uid-before')] }, txn);
    expect(verdict).toEqual({ kind: 'awaiting-gc', owner: ownedBy('deploy', 'uid-before') });
  });

  it('clashes, not waits, when such an object is held by a finalizer the garbage collector never removes', () => {
    const verdict = existingStoreVerdict(
      { ownerReferences: [ownedBy('deploy', 'uid-forged')], finalizers: ['example.com/hold'] },
      txn,
    );
    expect(verdict.kind).toBe('clash');
  });

  it.each([
    ['no owner', {}],
    ['another transaction', { ownerReferences: [ownedBy('other', 'uid-now')] }],
    ['another kind with our uid', { ownerReferences: [ownedBy('deploy', 'uid-now', 'Deployment')] }],
  ])('clashes with an object of %s', (_, existing) => {
    expect(existingStoreVerdict(existing, txn).kind).toBe('clash');
  });

  it('never calls an object "own" when the Transaction has no uid yet', () => {
    const noUid = { metadata: { name: 'deploy' } };
    expect(existingStoreVerdict({ ownerReferences: [ownedBy('deploy', '')] }, noUid).kind).not.toBe('own');
  });
});

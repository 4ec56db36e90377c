import { describe, expect, it } from 'vitest';
import { decideRollback, rollbackOutcome } from '../../../src/cli/rollback-request.ts';
import { item, txn } from './fixtures.ts';

const REQUEST = 'tx.janus.io/request-rollback';
const RETRY = 'tx.janus.io/retry-rollback';

describe('decideRollback', () => {
  it('requests a rollback of a Committed transaction', () => {
    const d = decideRollback(txn({ phase: 'Committed', items: [item(0, { committed: true })] }));
    expect(d).toMatchObject({ kind: 'request', annotation: REQUEST });
    expect(d.message).toContain('1 committed change(s)');
  });

  it('retries the rollback of a Failed transaction that has changes left standing', () => {
    const failed = txn({ phase: 'Failed', items: [item(0, { committed: true, conflict: true })] });
    expect(decideRollback(failed)).toMatchObject({ kind: 'request', annotation: RETRY });
  });

  it('has nothing to do when nothing was committed, or it is already rolled back', () => {
    expect(decideRollback(txn({ phase: 'Failed', items: [item(0, { error: 'x' })] })).kind).toBe('done');
    expect(decideRollback(txn({ phase: 'RolledBack' })).kind).toBe('done');
  });

  it('does not request twice, but there is something to wait for', () => {
    expect(decideRollback(txn({ phase: 'Committed', annotations: { [REQUEST]: 'x' } }))).toMatchObject({
      kind: 'underway',
      annotation: REQUEST,
    });
    expect(decideRollback(txn({ phase: 'RollingBack' }))).toMatchObject({
      kind: 'underway',
      annotation: undefined,
    });
  });

  it.each(['Pending', 'Preparing', 'Committing'] as const)('refuses while %s, and says why', (phase) => {
    const d = decideRollback(txn({ phase }));
    expect(d.kind).toBe('refused');
    expect(d.message).toContain('rolls back by itself');
  });
});

describe('rollbackOutcome', () => {
  it('waits while the request is not taken or the rollback runs', () => {
    expect(
      rollbackOutcome(txn({ phase: 'Committed', annotations: { [REQUEST]: 'x' } }), REQUEST),
    ).toBeUndefined();
    expect(rollbackOutcome(txn({ phase: 'RollingBack' }), REQUEST)).toBeUndefined();
    // A retry: still Failed from before, annotation not yet consumed.
    expect(rollbackOutcome(txn({ phase: 'Failed', annotations: { [RETRY]: 'x' } }), RETRY)).toBeUndefined();
  });

  it('succeeds at RolledBack and fails at Failed, with the controller message', () => {
    const rolledBack = txn({
      phase: 'RolledBack',
      conditions: [{ type: 'RolledBack', status: 'True', reason: 'RolledBack', message: '3 undone' }],
    });
    expect(rollbackOutcome(rolledBack, REQUEST)).toEqual({
      ok: true,
      message: 'shop/deploy-v2 is RolledBack: 3 undone',
    });
    const failed = txn({
      phase: 'Failed',
      conditions: [{ type: 'Stalled', status: 'True', reason: 'RollbackConflict', message: 'web changed' }],
    });
    expect(rollbackOutcome(failed, RETRY)).toEqual({
      ok: false,
      message: 'shop/deploy-v2 is Failed: web changed',
    });
  });

  it('fails when the controller dropped the request, or the Transaction is gone', () => {
    expect(rollbackOutcome(txn({ phase: 'Committed' }), REQUEST)?.ok).toBe(false);
    expect(rollbackOutcome(undefined, REQUEST)).toEqual({
      ok: false,
      message: 'the Transaction was deleted',
    });
  });
});

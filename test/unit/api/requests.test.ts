/** The requests table, every request in every phase. */
import { describe, expect, it } from 'vitest';
import {
  acceptance,
  isPhase,
  leavesWork,
  REQUEST_ANNOTATIONS,
  REQUEST_KINDS,
  REQUEST_TABLE,
  type RequestKind,
  requestsOn,
  type Verdict,
} from '../../../src/api/requests.ts';
import { PHASES, type Phase } from '../../../src/api/v1alpha1/index.ts';
import { item, txnIn } from '../saga/transaction-fixture.ts';

/** Written out by hand: a change to the table must change this too. */
const EXPECTED: Record<RequestKind, Record<Phase, Verdict>> = {
  cancel: {
    Pending: 'accept',
    Preparing: 'accept',
    Prepared: 'accept',
    Committing: 'accept',
    Verifying: 'accept',
    Committed: 'refuse',
    RollingBack: 'underway',
    RolledBack: 'done',
    Failed: 'refuse',
  },
  rollback: {
    Pending: 'wait',
    Preparing: 'wait',
    Prepared: 'wait',
    Committing: 'wait',
    Verifying: 'wait',
    Committed: 'accept',
    RollingBack: 'underway',
    RolledBack: 'done',
    Failed: 'refuse',
  },
  'retry-rollback': {
    Pending: 'wait',
    Preparing: 'wait',
    Prepared: 'wait',
    Committing: 'wait',
    Verifying: 'wait',
    Committed: 'refuse',
    RollingBack: 'wait',
    RolledBack: 'done',
    Failed: 'accept',
  },
};

const cases = REQUEST_KINDS.flatMap((request) => PHASES.map((phase) => [request, phase] as const));

describe('the requests table', () => {
  it('has a verdict for every request in every phase, and no other', () => {
    expect(Object.keys(REQUEST_TABLE).sort()).toEqual([...REQUEST_KINDS].sort());
    for (const request of REQUEST_KINDS)
      expect(Object.keys(REQUEST_TABLE[request]).sort()).toEqual([...PHASES].sort());
  });

  it.each(cases)('%s in %s', (request, phase) => {
    const txn = txnIn({ phase, items: [item.committed()] });
    const { verdict, message } = acceptance(request, txn);
    expect(verdict).toBe(EXPECTED[request][phase]);
    // Whatever is not carried out says why, naming the transaction.
    if (verdict === 'accept') expect(message).toBe('');
    else expect(message).toMatch(/^shop\/deploy-v2 /);
  });

  it('a Transaction without status is Pending', () => {
    expect(acceptance('cancel', txnIn()).verdict).toBe('accept');
    expect(acceptance('rollback', txnIn()).verdict).toBe('wait');
  });

  it('sends a rollback of a Failed transaction to a retry of its rollback', () => {
    expect(acceptance('rollback', txnIn({ phase: 'Failed' }))).toMatchObject({
      verdict: 'refuse',
      instead: 'retry-rollback',
    });
    for (const phase of PHASES.filter((p) => p !== 'Failed'))
      expect(acceptance('rollback', txnIn({ phase })).instead).toBeUndefined();
  });

  it('a retry of a Failed transaction that committed nothing is done, one with any commit is accepted', () => {
    expect(acceptance('retry-rollback', txnIn({ phase: 'Failed', items: [item.prepared()] }))).toEqual({
      verdict: 'done',
      message: 'shop/deploy-v2 failed before any change was committed: nothing is left to roll back',
    });
    expect(acceptance('retry-rollback', txnIn({ phase: 'Failed', items: [] })).verdict).toBe('done');
    expect(acceptance('retry-rollback', txnIn({ phase: 'Failed', items: [item.rolledBack()] })).verdict).toBe(
      'accept',
    );
    expect(acceptance('retry-rollback', txnIn({ phase: 'Failed', items: [item.conflict()] })).verdict).toBe(
      'accept',
    );
  });

  it('says where to go instead of a refused request', () => {
    const committed = txnIn({ phase: 'Committed' });
    expect(acceptance('cancel', committed).message).toContain('janus rollback deploy-v2 -n shop');
    expect(acceptance('retry-rollback', committed).message).toContain('janus rollback deploy-v2 -n shop');
    expect(acceptance('rollback', txnIn({ phase: 'Preparing' })).message).toBe(
      'shop/deploy-v2 is Preparing: it is still being applied, and rolls back by itself if a change fails. ' +
        'Once it is Committed, run janus rollback again (follow it with: janus status deploy-v2 -n shop --watch)',
    );
  });

  it('lets only an asker that cannot come back leave a request waiting', () => {
    expect(leavesWork('accept', false)).toBe(true);
    expect(leavesWork('accept', true)).toBe(true);
    expect(leavesWork('wait', false)).toBe(false);
    expect(leavesWork('wait', true)).toBe(true);
    for (const v of ['underway', 'done', 'refuse'] as const) {
      expect(leavesWork(v, true)).toBe(false);
      expect(leavesWork(v, false)).toBe(false);
    }
  });

  it('lists the requests set, a cancel first', () => {
    const all = Object.fromEntries(
      Object.values(REQUEST_ANNOTATIONS)
        .reverse()
        .map((a) => [a, 'x']),
    );
    expect(requestsOn(txnIn({ annotations: all }))).toEqual(['cancel', 'rollback', 'retry-rollback']);
    expect(requestsOn(txnIn({ annotations: { 'tx.janus.io/other': 'x' } }))).toEqual([]);
  });

  it('knows a phase from any other text', () => {
    for (const phase of PHASES) expect(isPhase(phase)).toBe(true);
    for (const text of ['Unknown', 'Rejected', 'Baseline', 'committed', ''])
      expect(isPhase(text)).toBe(false);
  });
});

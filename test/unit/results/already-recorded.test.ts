import { describe, expect, it } from 'vitest';
import type { Phase } from '../../../src/api/v1alpha1/index.ts';
import { alreadyRecorded, alreadyRecordedText } from '../../../src/results/already-recorded.ts';
import { renderTransactionResult } from '../../../src/results/index.ts';
import type { ResultDocument } from '../../../src/results/results-reader.ts';
import { aTransaction } from '../../support/transactions.ts';

/** A result file as parsed; `uid` null: one naming no Transaction (a rejected directory). */
const record = (phase: string, fields: Partial<ResultDocument> = {}, uid: string | null = 'u1') => ({
  phase,
  transaction: { namespace: 'shop', name: 'deploy', ...(uid !== null && { uid }) },
  progress: phase === 'Pending' ? '0/1' : '1/1',
  changes: [{ outcome: phase === 'Pending' ? 'pending' : 'committed' }],
  ...fields,
});

describe('alreadyRecorded', () => {
  it('nothing recorded at the path: every record adds', () => {
    expect(alreadyRecorded(undefined, record('Committed'))).toBe(false);
  });

  it('the same outcome of the same Transaction, however the two files differ otherwise', () => {
    // The fingerprint leaves out who recorded it, with which version, and the timestamps.
    expect(alreadyRecorded(record('Committed'), record('Committed'))).toBe(true);
    expect(alreadyRecorded(record('Pending', { message: 'waiting' }), record('Pending'))).toBe(true);
    expect(alreadyRecorded(record('RollingBack', { progress: '1/2' }), record('RollingBack'))).toBe(true);
  });

  it('another outcome in the same phase is a record of its own', () => {
    const failed = record('Failed', { message: 'x: conflict' });
    expect(alreadyRecorded(failed, record('Failed', { message: 'y: forbidden' }))).toBe(false);
  });

  it('a record of an earlier point of the same Transaction is stale; a later one adds', () => {
    const order = ['Pending', 'Preparing', 'Committed', 'RollingBack', 'RolledBack'];
    for (const [i, recorded] of order.entries()) {
      for (const [j, incoming] of order.entries()) {
        if (i !== j)
          expect(alreadyRecorded(record(recorded), record(incoming)), `${incoming} over ${recorded}`).toBe(
            j < i,
          );
      }
    }
    expect(alreadyRecorded(record('Failed'), record('Committed'))).toBe(true);
    expect(alreadyRecorded(record('RolledBack'), record('Failed'))).toBe(true);
  });

  it('RollingBack and Failed never hide each other: a failed rollback can be retried', () => {
    expect(alreadyRecorded(record('Failed'), record('RollingBack'))).toBe(false);
    expect(alreadyRecorded(record('RollingBack'), record('Failed'))).toBe(false);
  });

  it('another Transaction of the same name (another uid) is never the same outcome', () => {
    expect(alreadyRecorded(record('RolledBack', {}, 'u1'), record('Pending', {}, 'u2'))).toBe(false);
    expect(alreadyRecorded(record('Committed', {}, 'u1'), record('Committed', {}, 'u2'))).toBe(false);
  });

  it('a rejection is stale once the branch records a Transaction for the directory', () => {
    const rejected = record('Rejected', { message: 'invalid', source: { revision: 'main@sha1:aa' } }, null);
    expect(alreadyRecorded(record('Committed'), rejected)).toBe(true);
    expect(alreadyRecorded(rejected, rejected)).toBe(true);
    const later = { ...rejected, source: { revision: 'main@sha1:bb' } };
    expect(alreadyRecorded(rejected, later)).toBe(false); // rejected again at a later commit
    expect(alreadyRecorded(rejected, record('Pending'))).toBe(false); // fixed and materialized
  });

  it('a file that is not what Janus writes there never hides a record, nor throws', () => {
    const planted = { phase: 'Committed', transaction: { uid: 'u1' }, changes: 'not a list' } as never;
    expect(() => alreadyRecorded(planted, record('Committed'))).not.toThrow();
    expect(alreadyRecorded(planted, record('Committed'))).toBe(false);
    expect(alreadyRecorded(record('Unknown'), record('Committed'))).toBe(false);
  });
});

describe('alreadyRecordedText', () => {
  /** The result file of Transaction uid `uid` at `phase`, as replica `identity` renders it. */
  const file = (phase: Phase, identity: string, uid = 'u1'): string => {
    const txn = aTransaction({ uid, status: { phase, items: [] } });
    const text = Object.values(
      renderTransactionResult(txn, { controllerVersion: '0.1.0', identity }).files,
    )[0];
    if (text === undefined) throw new Error('no file rendered');
    return text;
  };

  it('decides as alreadyRecorded on files as the reporter renders them', () => {
    expect(alreadyRecordedText(file('Committed', 'a'), file('Committed', 'b'))).toBe(true);
    expect(alreadyRecordedText(file('RolledBack', 'b'), file('Committed', 'a'))).toBe(true);
    expect(alreadyRecordedText(file('Pending', 'a'), file('Committed', 'b'))).toBe(false);
    expect(alreadyRecordedText(file('Committed', 'a', 'u1'), file('Committed', 'b', 'u2'))).toBe(false);
  });

  it('a file that reads one way line by line and another as YAML can only make the record written', () => {
    // Its first "  uid:" line is inside a block scalar: as YAML it records u1 RolledBack.
    const planted = 'note: |\n  uid: u9\ntransaction:\n  uid: u1\nphase: RolledBack\n';
    expect(alreadyRecordedText(planted, file('Committed', 'a'))).toBe(false);
    // Without the lines, it is parsed: a flow mapping is YAML too.
    expect(alreadyRecordedText('{transaction: {uid: u1}, phase: RolledBack}', file('Committed', 'a'))).toBe(
      true,
    );
  });
});

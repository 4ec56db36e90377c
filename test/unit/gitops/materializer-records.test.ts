/**
 * What the materializer and reporter write to the results branch, and how it is read back: the
 * round trip that makes "never twice" work.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import { renderBaseline, renderRollbackRefusal } from '../../../src/gitops/materialize-records.ts';
import { rollbackReason } from '../../../src/gitops/materializer.ts';
import { parseTrailers } from '../../../src/results/commit-message.ts';
import { renderTransactionResult } from '../../../src/results/render-transaction.ts';
import { renderMaterialized } from '../../../src/results/reporter.ts';
import { BASELINE_FILE, fingerprintOf, parseBaselineFile } from '../../../src/results/results-reader.ts';
import { aTransaction, sourceAnnotations } from '../../support/transactions.ts';

const COMMIT = '0123456789abcdef0123456789abcdef01234567';
const context = {
  controllerVersion: '0.1.0',
  identity: 'system:serviceaccount:janus-system:janus-controller',
};
const source = (path: string) => ({
  repository: 'https://git.example/org/repo',
  revision: `main@sha1:${COMMIT}`,
  path,
});

function txn(status?: Transaction['status']): Transaction {
  return aTransaction({
    annotations: sourceAnnotations(source('transactions/deploy-v2')),
    changes: [
      {
        target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'a' },
        type: 'Patch',
        content: { data: { x: '1' } },
      },
      { target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'b' }, type: 'Delete' },
    ],
    ...(status && { status }),
  });
}

const committed = (): Transaction['status'] => ({
  phase: 'Committed',
  completedAt: '2026-03-01T12:00:00Z',
  items: [
    { target: 'v1 ConfigMap shop/a', prepared: true, committed: true, rolledBack: false },
    { target: 'v1 ConfigMap shop/b', prepared: true, committed: true, rolledBack: false },
  ],
});

describe('the baseline of a first run', () => {
  it('is one commit with one file listing every directory, read back as such', () => {
    const record = renderBaseline(
      ['transactions/old-a', 'transactions/old-b'],
      { repository: 'https://git.example/org/repo', revision: `main@sha1:${COMMIT}` },
      context,
    );
    expect(Object.keys(record.files)).toEqual([BASELINE_FILE]);
    const text = record.files[BASELINE_FILE] ?? '';
    expect(parse(text)).toMatchObject({
      kind: 'TransactionBaseline',
      source: { repository: 'https://git.example/org/repo', revision: `main@sha1:${COMMIT}` },
      directories: ['transactions/old-a', 'transactions/old-b'],
      recordedBy: { identity: context.identity },
    });
    expect(parseBaselineFile(text)).toEqual(new Set(['transactions/old-a', 'transactions/old-b']));
    expect(record.message.split('\n')[0]).toBe('Baseline: 2 existing directories recorded, none applied');
    expect(parseTrailers(record.message)).toEqual({
      'Janus-Transaction': '*',
      'Janus-Phase': 'Baseline',
      'Janus-Source': COMMIT,
    });
  });

  it('reads as empty when the file is not a baseline', () => {
    expect(parseBaselineFile('not: [yaml')).toEqual(new Set());
    expect(parseBaselineFile('directories: 3\n')).toEqual(new Set());
  });
});

describe('a ROLLBACK file that cannot act', () => {
  it('is a notice: no file changes, a subject saying why', () => {
    const dir = { namespace: 'shop', name: 'deploy-v2', source: source('transactions/deploy-v2') };
    const gone = renderRollbackRefusal(dir, { kind: 'gone' });
    expect(gone.files).toEqual({});
    expect(gone.message.split('\n')[0]).toBe('shop/deploy-v2: rollback ignored (Transaction not found)');
    expect(parseTrailers(gone.message)['Janus-Phase']).toBe('Ignored');
    expect(renderRollbackRefusal(dir, { kind: 'phase', phase: 'RolledBack' }).message).toMatch(
      /^shop\/deploy-v2: rollback ignored \(RolledBack\)\n/,
    );
  });

  it('sends the file text as the reason, bounded, or says where the file is when it is empty', () => {
    expect(rollbackReason('  INC-1: broken\n', 'transactions/x/ROLLBACK', COMMIT)).toBe('INC-1: broken');
    expect(rollbackReason('\n', 'transactions/x/ROLLBACK', COMMIT)).toBe(
      `ROLLBACK file transactions/x/ROLLBACK added in ${COMMIT}`,
    );
    expect(rollbackReason('x'.repeat(5000), 'f', COMMIT)).toHaveLength(1024);
  });
});

describe('the Pending record of a Transaction just created', () => {
  it('names where it came from, and is superseded by its outcome', () => {
    const record = renderMaterialized(txn(), context);
    expect(record.message.split('\n')[0]).toBe('shop/deploy-v2: Pending (materialized, 2 changes)');
    expect(parseTrailers(record.message)).toMatchObject({ 'Janus-Phase': 'Pending', 'Janus-Source': COMMIT });
    const pending = fingerprintOf(record.files['results/shop/deploy-v2.yaml'] ?? '');
    const done = renderTransactionResult(txn(committed()), context);
    expect(fingerprintOf(done.files['results/shop/deploy-v2.yaml'] ?? '')).not.toBe(pending);
  });

  it('is the outcome itself when the Transaction found already has one (adopted after a restart)', () => {
    expect(renderMaterialized(txn(committed()), context).message.split('\n')[0]).toBe(
      'shop/deploy-v2: Committed (2/2 changes)',
    );
  });
});

describe('fingerprints', () => {
  const file = (t: Transaction, ctx = context) =>
    renderTransactionResult(t, ctx).files['results/shop/deploy-v2.yaml'] ?? '';

  it('ignore who wrote a record and with which version', () => {
    const other = { controllerVersion: '9.9.9', identity: 'someone-else' };
    expect(fingerprintOf(file(txn(committed()), other))).toBe(fingerprintOf(file(txn(committed()))));
  });

  it('tell outcomes apart, but count a rollback in progress as one', () => {
    const rollingBack = (rolledBack: boolean): Transaction['status'] => ({
      phase: 'RollingBack',
      items: [
        { target: 'v1 ConfigMap shop/a', prepared: true, committed: true, rolledBack },
        { target: 'v1 ConfigMap shop/b', prepared: true, committed: true, rolledBack: false },
      ],
    });
    expect(fingerprintOf(file(txn(rollingBack(false))))).toBe(fingerprintOf(file(txn(rollingBack(true)))));
    expect(fingerprintOf(file(txn(rollingBack(false))))).not.toBe(fingerprintOf(file(txn(committed()))));
  });

  it('are undefined for text that is not a result file', () => {
    expect(fingerprintOf('not: [yaml')).toBeUndefined();
    expect(fingerprintOf('kind: Something\n')).toBeUndefined();
  });
});

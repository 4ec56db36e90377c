/**
 * The one trimming of the Transaction cache (controller/transaction-cache.ts). Its promise to the
 * consumers that share the cache: a finished Transaction cached compact gives what each of them
 * derives from it exactly as the full object does (decide(), retention, the results fingerprint,
 * the notification, the commit status), and only the record itself needs the full object.
 */
import { describe, expect, it } from 'vitest';
import {
  FINALIZER,
  type ItemStatus,
  type Phase,
  type Transaction,
  type TransactionStatus,
} from '../../../src/api/v1alpha1/index.ts';
import { statusOfTransaction } from '../../../src/commit-status/state.ts';
import {
  cachedForm,
  isCompact,
  isWithoutContent,
  MAX_CACHED_CONTENT_BYTES,
  TRANSACTION_PAGE_SIZE,
} from '../../../src/controller/transaction-cache.ts';
import { eventFromRecord } from '../../../src/notify/event.ts';
import { phaseSince } from '../../../src/notify/notifier.ts';
import { renderTransactionResult } from '../../../src/results/render-transaction.ts';
import { fingerprintOf } from '../../../src/results/results-reader.ts';
import { DEFAULT_RETENTION, retentionVerdicts } from '../../../src/retention/select.ts';
import { decide } from '../../../src/saga/decide.ts';
import { type PhaseDetail, withPhase } from '../../../src/saga/status.ts';
import { aTransaction, sourceAnnotations } from '../../support/transactions.ts';

const MiB = 1024 * 1024;

/** A Transaction of `changes` ConfigMap creations holding `bytes` of data in all. */
function txn(changes: number, bytes: number, phase = 'Committing'): Transaction {
  return aTransaction({
    name: 'big',
    uid: 'u',
    resourceVersion: '7',
    changes: Array.from({ length: changes }, (_, i) => ({
      target: { apiVersion: 'v1', kind: 'ConfigMap', name: `cm-${i}` },
      type: 'Create' as const,
      content: { data: { v: 'x'.repeat(Math.floor(bytes / changes)) } },
    })),
    status: {
      phase: phase as 'Committing',
      items: Array.from({ length: changes }, () => ({ committed: true }) as ItemStatus),
    },
  });
}

describe('what the cache keeps of an unfinished Transaction', () => {
  it('keeps a typical one whole', () => {
    const small = txn(3, 30 * 1024);
    expect(cachedForm(small)).toBe(small);
    expect(isWithoutContent(small)).toBe(false);
    expect(isCompact(small)).toBe(false);
  });

  it('keeps a large one without its contents, and targets, types and status as they were', () => {
    const large = txn(2, 1.4 * MiB);
    const cached = cachedForm(large);
    expect(isWithoutContent(cached)).toBe(true);
    expect(cached.spec.changes).toEqual([
      { target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm-0' }, type: 'Create' },
      { target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'cm-1' }, type: 'Create' },
    ]);
    expect(cached.status).toBe(large.status);
    expect(cached.metadata).toBe(large.metadata);
  });

  it('holds at most a few KiB per change beyond the 64 KiB of contents: 300 of the largest in flight stay under 20 MB', () => {
    // The largest a Transaction gets (etcd stores at most 1.5 MiB), in 256 changes.
    const cached = cachedForm(txn(256, 1.4 * MiB));
    const bytes = JSON.stringify(cached).length;
    expect(bytes).toBeLessThan(64 * 1024);
    expect(300 * bytes).toBeLessThan(20 * MiB);
    expect(MAX_CACHED_CONTENT_BYTES).toBe(64 * 1024);
    // A page of the LIST that fills the cache is parsed whole: 10 Transactions of at most 1.5 MiB.
    expect(TRANSACTION_PAGE_SIZE * 1.5 * MiB).toBeLessThanOrEqual(15 * MiB);
  });

  it('never keeps managedFields', () => {
    const withFields = aTransaction({ status: { phase: 'Committing' } });
    withFields.metadata.managedFields = [{ manager: 'kubectl', operation: 'Apply' }];
    expect(cachedForm(withFields).metadata.managedFields).toBeUndefined();
  });
});

const NOW = Date.parse('2026-03-05T10:00:00Z');
const CONTEXT = { controllerVersion: '0.1.0', identity: 'janus' };
const SHA = 'c'.repeat(40);

/** A status as the saga writes it: items, then each phase through withPhase (its conditions). */
function statusThrough(
  items: ItemStatus[],
  phases: Array<[Phase, PhaseDetail, string]>,
  extra: Partial<TransactionStatus> = {},
): TransactionStatus {
  let status: TransactionStatus = { items, startedAt: '2026-03-01T10:00:00Z', ...extra };
  for (const [phase, detail, at] of phases) status = withPhase(status, phase, detail, new Date(at), 1);
  return status;
}

const item = (name: string, fields: Partial<ItemStatus>): ItemStatus => ({
  target: `v1 ConfigMap shop/${name}`,
  type: 'Patch',
  prepared: true,
  resourceVersion: '100',
  committedResourceVersion: '101',
  lease: `shop/janus-lock-configmap-${name}-0123456789abcdef`,
  snapshotDigest: 'd'.repeat(64),
  committedFingerprint: 'e'.repeat(64),
  ...fields,
});

/** A finished Transaction from Git, with three changes and the status `status`. */
function finished(name: string, status: TransactionStatus, finalizer = false): Transaction {
  const full = aTransaction({
    name,
    uid: `uid-${name}`,
    resourceVersion: '200',
    ...(finalizer && { finalizers: [FINALIZER] }),
    annotations: sourceAnnotations({
      repository: 'https://git.example.com/platform/deploys.git',
      revision: `main@sha1:${SHA}`,
      path: `transactions/${name}`,
      sequence: '7',
    }),
    changes: ['a', 'b', 'c'].map((n) => ({
      target: { apiVersion: 'v1', kind: 'ConfigMap', name: n },
      type: 'Patch' as const,
      content: { data: { release: '2', blob: 'x'.repeat(2000) } },
    })),
    status: {
      ...status,
      source: { repository: 'https://git.example.com/platform/deploys.git', revision: `main@sha1:${SHA}` },
    },
  });
  full.metadata.managedFields = [{ manager: 'janus', operation: 'Update', fieldsV1: { 'f:status': {} } }];
  return full;
}

const FINISHED: Transaction[] = [
  finished(
    'committed',
    statusThrough(
      ['a', 'b', 'c'].map((n) =>
        item(n, { committed: true, health: { status: 'Current', reason: 'Ready', message: 'ok' } }),
      ),
      [
        ['Committing', { reason: 'Prepared', message: 'all 3 changes prepared' }, '2026-03-01T10:00:01Z'],
        ['Committed', { reason: 'Committed', message: '3/3 changes committed' }, '2026-03-01T10:00:04Z'],
      ],
      {
        health: {
          check: 'Commit',
          startedAt: '2026-03-01T10:00:02Z',
          completedAt: '2026-03-01T10:00:04Z',
          result: 'Healthy',
          message: 'every target is healthy',
        },
      },
    ),
  ),
  finished(
    'rolled-back',
    statusThrough(
      [
        item('a', { committed: true, rolledBack: true }),
        item('b', { committed: true, conflict: true }),
        item('c', {}),
      ],
      [
        [
          'RollingBack',
          { reason: 'Unhealthy', message: 'web: 2 pods crash-looping' },
          '2026-03-01T10:01:00Z',
        ],
        [
          'RolledBack',
          { reason: 'RolledBack', message: '1 committed change rolled back' },
          '2026-03-01T10:02:00Z',
        ],
      ],
    ),
  ),
  finished(
    'failed-needs-a-human',
    statusThrough(
      [
        item('a', { committed: true }),
        item('b', { committed: true, error: 'the API server refused the undo: admission webhook denied it' }),
        item('c', { error: 'dry run refused: forbidden' }),
      ],
      [
        [
          'Failed',
          { reason: 'RollbackFailed', message: 'undo of b refused; janus recover' },
          '2026-03-01T10:03:00Z',
        ],
      ],
      { recoveryAttempts: 2, nextRecoveryAt: '2026-03-01T10:10:00Z' },
    ),
    true,
  ),
  finished(
    'failed-at-start',
    statusThrough(
      [],
      [['Failed', { reason: 'InvalidTarget', message: 'target c: no such kind' }, '2026-03-01T10:04:00Z']],
    ),
    true,
  ),
];

describe('what the cache keeps of a finished Transaction', () => {
  const record = (t: Transaction) => renderTransactionResult(t, CONTEXT);
  const text = (t: Transaction) => Object.values(record(t).files)[0] ?? '';

  it.each(FINISHED.map((t) => [t.metadata.name, t] as const))('%s: compact, without contents', (_, full) => {
    const cached = cachedForm(full);
    expect(isCompact(cached)).toBe(true);
    expect(cached.metadata.managedFields).toBeUndefined();
    expect(cached.spec.changes.every((c) => c.content === undefined)).toBe(true);
    expect(JSON.stringify(cached).length).toBeLessThan(JSON.stringify(full).length / 3);
  });

  it.each(FINISHED.map((t) => [t.metadata.name, t] as const))(
    '%s: decide(), retention, the results fingerprint, the event and the commit status read it as the full one',
    (_, full) => {
      const cached = cachedForm(full);
      expect(decide(cached, NOW)).toEqual(decide(full, NOW));
      expect(retentionVerdicts([cached], DEFAULT_RETENTION, NOW, () => true)).toEqual(
        retentionVerdicts([full], DEFAULT_RETENTION, NOW, () => true),
      );
      expect(fingerprintOf(text(cached))).toEqual(fingerprintOf(text(full)));
      expect(phaseSince(cached)).toEqual(phaseSince(full));
      const at = new Date(NOW);
      expect(eventFromRecord(record(cached), at)).toEqual(eventFromRecord(record(full), at));
      expect(statusOfTransaction(cached)).toEqual(statusOfTransaction(full));
    },
  );

  it('is not the record itself: the reporter reads the full object to write one', () => {
    const [full] = FINISHED;
    if (!full) throw new Error('no fixture');
    expect(text(cachedForm(full))).not.toEqual(text(full));
  });

  it('stays whole while it is being deleted (the finalizer step reads it)', () => {
    const [full] = FINISHED;
    if (!full) throw new Error('no fixture');
    const deleting = { ...full, metadata: { ...full.metadata, deletionTimestamp: '2026-03-05T09:00:00Z' } };
    const cached = cachedForm(deleting);
    expect(isCompact(cached)).toBe(false);
    expect(cached.spec).toBe(deleting.spec);
  });
});

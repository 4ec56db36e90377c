import { describe, expect, it } from 'vitest';
import type { ItemStatus, Transaction } from '../../../src/api/v1alpha1/index.ts';
import {
  compactForCache,
  isWithoutContent,
  MAX_CACHED_CONTENT_BYTES,
  TRANSACTION_PAGE_SIZE,
} from '../../../src/controller/compact.ts';
import { aTransaction } from '../../support/transactions.ts';

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

describe('what the controller caches of an unfinished Transaction', () => {
  it('keeps a typical one whole', () => {
    const small = txn(3, 30 * 1024);
    expect(compactForCache(small)).toBe(small);
    expect(isWithoutContent(small)).toBe(false);
  });

  it('keeps a large one without its contents, and targets, types and status as they were', () => {
    const large = txn(2, 1.4 * MiB);
    const cached = compactForCache(large);
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
    const cached = compactForCache(txn(256, 1.4 * MiB));
    const bytes = JSON.stringify(cached).length;
    expect(bytes).toBeLessThan(64 * 1024);
    expect(300 * bytes).toBeLessThan(20 * MiB);
    expect(MAX_CACHED_CONTENT_BYTES).toBe(64 * 1024);
    // A page of the LIST that fills the cache is parsed whole: 10 Transactions of at most 1.5 MiB.
    expect(TRANSACTION_PAGE_SIZE * 1.5 * MiB).toBeLessThanOrEqual(15 * MiB);
  });

  it('compacts a finished one as before', () => {
    const done = compactForCache(txn(2, 1.4 * MiB, 'Committed'));
    expect(done.spec.changes).toEqual([]);
    expect(isWithoutContent(done)).toBe(false);
  });
});

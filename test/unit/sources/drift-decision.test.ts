/** Drift decisions: when a source is checked, where its applied render is found, what the status and notifications say. */
import { describe, expect, it } from 'vitest';
import {
  type InventoryEntry,
  type SourceStatus,
  sourceStatusSchema,
} from '../../../src/api/v1alpha1/index.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import {
  afterCheck,
  appliedContents,
  correctionBackoffMs,
  correctionChanges,
  correctionName,
  type DriftedObject,
  decideCorrection,
  driftDue,
  driftIntervalMs,
  driftMessage,
  driftNews,
  driftStatus,
  endedCorrection,
  sourcesToCheck,
  startedCorrection,
} from '../../../src/sources/drift-decision.ts';
import { identityKey, identityOf, inventoryEntry } from '../../../src/sources/inventory.ts';
import { settledStatus } from '../../../src/sources/source-status.ts';

const keyOf = (o: KubeObject) => identityKey(identityOf(o));

const KEY = 'the controller key';
const COMMIT = '3f2a9c1'.padEnd(40, '0');
const cm = (name: string, data: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'shop' },
  data,
});
const MINUTE = 60_000;
const T0 = new Date('2026-11-28T12:00:00Z');
const at = (ms: number) => new Date(T0.getTime() + ms);

const applied = (over: Partial<SourceStatus> = {}): SourceStatus => ({
  lastApplied: {
    revision: COMMIT,
    shortRevision: '3f2a9c1',
    transaction: 'shop-3f2a9c1',
    time: T0.toISOString(),
  },
  lastAttempted: {
    revision: COMMIT,
    shortRevision: '3f2a9c1',
    transaction: 'shop-3f2a9c1',
    outcome: 'Committed',
  },
  inventory: [inventoryEntry(cm('a', { x: '1' }), KEY)],
  ...over,
});

describe('driftIntervalMs', () => {
  it('reads the interval; 0s is never, whatever the test-only override', () => {
    expect(driftIntervalMs({ spec: { drift: { interval: '10m' } } } as never)).toBe(10 * MINUTE);
    expect(driftIntervalMs({ spec: {} } as never)).toBe(10 * MINUTE);
    expect(driftIntervalMs({ spec: { drift: { interval: '0s' } } } as never, 500)).toBe(0);
    expect(driftIntervalMs({ spec: { drift: { interval: '1h' } } } as never, 500)).toBe(500);
  });
});

describe('driftDue', () => {
  it('never with interval 0 or before anything was applied', () => {
    expect(driftDue(applied(), 0, T0).due).toBe(false);
    expect(driftDue({}, MINUTE, T0).due).toBe(false);
    expect(driftDue(applied({ inventory: [] }), MINUTE, T0).due).toBe(false);
  });

  it('not while a transaction of the source is in flight', () => {
    const status = applied({
      lastAttempted: { revision: COMMIT, transaction: 'shop-9b8e7d6', outcome: 'InProgress' },
    });
    expect(driftDue(status, MINUTE, at(60 * MINUTE)).due).toBe(false);
  });

  it('at once when never checked, or when a commit was applied since a check that found drift', () => {
    expect(driftDue(applied(), MINUTE, T0).due).toBe(true);
    const drifted = { checkedAt: at(-MINUTE / 2).toISOString(), count: 2 };
    expect(driftDue(applied({ drift: drifted }), 10 * MINUTE, T0).due).toBe(true);
  });

  it('at the interval after a commit applied since a check that found none (no full check per commit)', () => {
    const inSync = { checkedAt: at(-MINUTE / 2).toISOString(), count: 0 };
    expect(driftDue(applied({ drift: inSync }), 10 * MINUTE, T0)).toEqual({
      due: false,
      inMs: 10 * MINUTE - MINUTE / 2,
    });
  });

  it('not while a correction is in flight; at once when one ended since the last check', () => {
    const checked = { checkedAt: at(MINUTE).toISOString(), count: 1 };
    const correction = { transaction: 'shop-drift-7', objects: 1, time: at(2 * MINUTE).toISOString() };
    const running = applied({ drift: { ...checked, correction: { ...correction, outcome: 'InProgress' } } });
    expect(driftDue(running, MINUTE, at(60 * MINUTE)).due).toBe(false);
    const ended = applied({ drift: { ...checked, correction: { ...correction, outcome: 'Committed' } } });
    expect(driftDue(ended, 10 * MINUTE, at(3 * MINUTE)).due).toBe(true);
  });

  it('once the interval has passed since the last check, and says how long until then', () => {
    const status = applied({ drift: { checkedAt: at(MINUTE).toISOString(), count: 0 } });
    expect(driftDue(status, 10 * MINUTE, at(5 * MINUTE))).toEqual({ due: false, inMs: 6 * MINUTE });
    expect(driftDue(status, 10 * MINUTE, at(11 * MINUTE)).due).toBe(true);
  });
});

describe('appliedContents', () => {
  const a1 = cm('a', { x: '1' });
  const b1 = cm('b', { y: '1' });
  const apply = (o: KubeObject) => ({
    type: 'Apply' as const,
    content: o as unknown as Record<string, unknown>,
  });
  const txn = (...objects: KubeObject[]) => ({ spec: { changes: objects.map(apply) } }) as never;

  it('finds each entry in whichever transaction applied it, by identity and digest', () => {
    const inventory = [inventoryEntry(a1, KEY), inventoryEntry(b1, KEY)];
    const older = txn(a1, cm('b', { y: 'old' }));
    const newer = txn(b1);
    const { found, missing } = appliedContents(inventory, [newer, older], KEY);
    expect([...found.values()]).toEqual(expect.arrayContaining([a1, b1]));
    expect(found.size).toBe(2);
    expect(missing).toEqual([]);
  });

  it('never takes another render of the object (another digest): the entry is missing', () => {
    const inventory: InventoryEntry[] = [inventoryEntry(a1, KEY)];
    const { found, missing } = appliedContents(inventory, [txn(cm('a', { x: '2' }))], KEY);
    expect(found.size).toBe(0);
    expect(missing).toEqual(inventory);
  });
});

const drifted = (name: string, reason: DriftedObject['reason'] = 'changed'): DriftedObject => ({
  object: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name },
  reason,
  detail: reason === 'missing' ? 'not found' : 'data.x',
});

describe('driftStatus', () => {
  it('counts every drifted object, lists the first 32, and sets Drifted True naming the first ones', () => {
    const objects = Array.from({ length: 40 }, (_, i) => drifted(`c${i}`));
    const status = driftStatus(
      applied(),
      { checkedAt: at(MINUTE), revision: COMMIT, checked: 40, drifted: objects, skipped: 0 },
      at(MINUTE),
      4,
    );
    expect(status.drift?.count).toBe(40);
    expect(status.drift?.objects).toHaveLength(32);
    expect(status.drift?.objects?.[0]).toBe('v1 ConfigMap shop/c0');
    const condition = status.conditions?.find((c) => c.type === 'Drifted');
    expect(condition).toMatchObject({ status: 'True', reason: 'Drifted', observedGeneration: 4 });
    expect(condition?.message).toBe(
      '40 object(s) differ from the render of 3f2a9c1, as last applied: v1 ConfigMap shop/c0 (changed: data.x); v1 ConfigMap shop/c1 (changed: data.x); v1 ConfigMap shop/c2 (changed: data.x); and 37 more',
    );
    expect(status.inventory).toEqual(applied().inventory);
    const correction = { transaction: 'shop-drift-7', outcome: 'Committed' as const, objects: 1 };
    const kept = driftStatus(
      applied({ drift: { count: 1, correction } }),
      { checkedAt: at(MINUTE), revision: COMMIT, checked: 1, drifted: [], skipped: 0 },
      at(MINUTE),
    );
    expect(kept.drift?.correction).toEqual(correction);
  });

  it('sets Drifted False when nothing differs', () => {
    const status = driftStatus(
      applied(),
      { checkedAt: at(MINUTE), revision: COMMIT, checked: 1, drifted: [], skipped: 0 },
      at(MINUTE),
    );
    expect(status.drift).toEqual({ checkedAt: at(MINUTE).toISOString(), count: 0, objects: [] });
    expect(status.conditions?.find((c) => c.type === 'Drifted')).toMatchObject({
      status: 'False',
      reason: 'InSync',
      message: 'the 1 live object(s) match the render of 3f2a9c1, as last applied',
    });
  });
});

describe('driftMessage', () => {
  it('says how many objects were not compared', () => {
    expect(driftMessage({ revision: COMMIT, checked: 0, drifted: [], skipped: 2 })).toBe(
      "the 0 live object(s) match the render of 3f2a9c1, as last applied; 2 not compared (their last applied render not found, or a request refused: see janus run's log)",
    );
  });

  it('names a missing object as such', () => {
    expect(driftMessage({ revision: COMMIT, checked: 2, drifted: [drifted('gone', 'missing')] })).toBe(
      '1 object(s) differ from the render of 3f2a9c1, as last applied: v1 ConfigMap shop/gone (missing: not found)',
    );
  });
});

describe('driftNews', () => {
  const state = (objects: string[]) => ({ checkedAt: T0.toISOString(), count: objects.length, objects });
  it('tells drift found, another set drifted, and drift gone; not the same drift again', () => {
    expect(driftNews(undefined, state([]))).toBeUndefined();
    expect(driftNews(undefined, state(['a']))).toBe('drifted');
    expect(driftNews(state([]), state(['a']))).toBe('drifted');
    expect(driftNews(state(['a']), state(['a']))).toBeUndefined();
    expect(driftNews(state(['a']), state(['a', 'b']))).toBe('drifted');
    expect(driftNews(state(['a']), state(['b']))).toBe('drifted');
    expect(driftNews(state(['a']), state([]))).toBe('resolved');
  });
});

describe('a correction', () => {
  it('is named <source>-drift-<sequence>, within 63 characters', () => {
    expect(correctionName('shop', 42)).toBe('shop-drift-42');
    const long = 'a'.repeat(55);
    expect(correctionName(long, 123456)).toHaveLength(63);
    expect(correctionName(long, 123456).endsWith('-drift-123456')).toBe(true);
  });

  it('applies the drifted objects only, in inventory order, with their last applied renders', () => {
    const a = cm('a', { x: '1' });
    const b = cm('b', { y: '1' });
    const c = cm('c', { z: '1' });
    const inventory = [a, b, c].map((o) => inventoryEntry(o, KEY));
    const contents = new Map([a, b, c].map((o) => [keyOf(o), o]));
    const changes = correctionChanges(inventory, [drifted('c', 'missing'), drifted('a')], contents);
    expect(changes).toEqual([
      {
        type: 'Apply',
        target: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'a' },
        content: a,
      },
      {
        type: 'Apply',
        target: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'c' },
        content: c,
      },
    ]);
  });

  it('puts an object applied encrypted back as the same sopsContent, never its decrypted content', () => {
    const a = cm('a', { x: '1' });
    const secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's', namespace: 'shop' },
      data: { p: 'cHc=' },
    };
    const inventory = [a, secret].map((o) => inventoryEntry(o, KEY));
    const contents = new Map([a, secret].map((o) => [keyOf(o), o]));
    const sealed = new Map([[keyOf(secret), 'ENC sops text']]);
    const changes = correctionChanges(
      inventory,
      [drifted('a'), { ...drifted('s'), object: identityOf(secret) }],
      contents,
      sealed,
    );
    expect(changes).toEqual([
      {
        type: 'Apply',
        target: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'a' },
        content: a,
      },
      {
        type: 'Apply',
        target: { apiVersion: 'v1', kind: 'Secret', namespace: 'shop', name: 's' },
        sopsContent: 'ENC sops text',
      },
    ]);
  });

  it('is waited for while its Transaction runs, and its outcome written once it ended or was never created', () => {
    const running = startedCorrection(applied(), {
      transaction: 'shop-drift-7',
      objects: 1,
      time: T0.toISOString(),
    });
    expect(running.drift?.correction?.outcome).toBe('InProgress');
    expect(decideCorrection(applied(), 'Committed')).toEqual({ do: 'none' });
    expect(decideCorrection(running, 'Verifying')).toEqual({ do: 'wait' });
    expect(decideCorrection(running, 'Committed')).toEqual({ do: 'settle', outcome: 'Committed' });
    expect(decideCorrection(running, 'RolledBack')).toEqual({ do: 'settle', outcome: 'RolledBack' });
    expect(decideCorrection(running, 'absent')).toEqual({ do: 'settle', outcome: 'Failed' });
  });
});

describe('the backoff of a failing correction', () => {
  const HOUR = 60 * MINUTE;
  const INTERVAL = 10 * MINUTE;
  const correcting = (status: SourceStatus) => ({
    spec: { drift: { interval: '10m', correct: true } },
    status,
  });
  /** A check at `now` that found one drifted object, its status written; then what it does. */
  const check = (status: SourceStatus, now: Date) => {
    const checked = driftStatus(
      status,
      { checkedAt: now, revision: COMMIT, checked: 1, drifted: [drifted('a')], skipped: 0 },
      now,
    );
    return { status: checked, next: afterCheck(correcting(checked), 1, now) };
  };
  /** A correction created at `start` that ended `outcome` at `end`. */
  const correction = (
    status: SourceStatus,
    n: number,
    start: Date,
    end: Date,
    outcome: 'Committed' | 'RolledBack' | 'Failed',
  ) =>
    endedCorrection(
      startedCorrection(status, { transaction: `shop-drift-${n}`, objects: 1, time: start.toISOString() }),
      outcome,
      end.toISOString(),
      INTERVAL,
    );

  it('is the interval doubled with each failure, at most an hour, or the interval when longer', () => {
    expect([1, 2, 3, 4, 5, 40].map((f) => correctionBackoffMs(INTERVAL, f) / MINUTE)).toEqual([
      10, 20, 40, 60, 60, 60,
    ]);
    expect([1, 2, 6, 7, 8].map((f) => correctionBackoffMs(MINUTE, f) / MINUTE)).toEqual([1, 2, 32, 60, 60]);
    expect([1, 3].map((f) => correctionBackoffMs(2 * HOUR, f) / HOUR)).toEqual([2, 2]);
    expect(correctionBackoffMs(INTERVAL, 0)).toBe(0);
    expect(correctionBackoffMs(0, 3)).toBe(0);
  });

  it('holds back the correction, not the check: none at the check after a rollback, none at the next interval after two', () => {
    // The check that found the drift corrects it.
    const first = check(applied(), T0);
    expect(first.next).toEqual({ do: 'correct' });
    const rolledBack = correction(first.status, 7, T0, at(2 * MINUTE), 'RolledBack');
    expect(rolledBack.drift?.correction).toMatchObject({
      transaction: 'shop-drift-7',
      outcome: 'RolledBack',
      failures: 1,
      retryAfter: at(12 * MINUTE).toISOString(),
    });
    // Checked again at once (read-only), still drifted: reported, not corrected (before: a second
    // correction there and then, and at every check after).
    expect(driftDue(rolledBack, INTERVAL, at(2 * MINUTE)).due).toBe(true);
    const atOnce = check(rolledBack, at(2 * MINUTE + 5_000));
    expect(atOnce.next).toEqual({ do: 'report', heldUntil: at(12 * MINUTE).toISOString() });
    expect(atOnce.status.drift).toMatchObject({ count: 1, correction: { failures: 1 } });
    expect(atOnce.status.conditions?.find((c) => c.type === 'Drifted')?.status).toBe('True');
    // The next interval's check: the backoff (one interval) has passed.
    const retry = check(atOnce.status, at(12 * MINUTE + 5_000));
    expect(retry.next).toEqual({ do: 'correct' });
    // A second failure doubles it: the next interval's check only reports, the one after corrects.
    const again = correction(retry.status, 8, at(12 * MINUTE + 5_000), at(14 * MINUTE), 'Failed');
    expect(again.drift?.correction).toMatchObject({
      failures: 2,
      retryAfter: at(34 * MINUTE).toISOString(),
    });
    expect(check(again, at(24 * MINUTE + 5_000)).next).toMatchObject({ do: 'report' });
    const third = check(check(again, at(24 * MINUTE + 5_000)).status, at(34 * MINUTE + 5_000));
    expect(third.next).toEqual({ do: 'correct' });
    // While the third runs, the failures are kept; its commit clears them.
    const running = startedCorrection(third.status, {
      transaction: 'shop-drift-9',
      objects: 1,
      time: at(35 * MINUTE).toISOString(),
    });
    expect(running.drift?.correction).toEqual({
      transaction: 'shop-drift-9',
      outcome: 'InProgress',
      objects: 1,
      time: at(35 * MINUTE).toISOString(),
      failures: 2,
    });
    const committed = correction(third.status, 9, at(35 * MINUTE), at(36 * MINUTE), 'Committed');
    expect(committed.drift?.correction).toEqual({
      transaction: 'shop-drift-9',
      outcome: 'Committed',
      objects: 1,
      time: at(36 * MINUTE).toISOString(),
    });
    // A later failure starts again from one interval.
    const later = correction(committed, 10, at(50 * MINUTE), at(51 * MINUTE), 'RolledBack');
    expect(later.drift?.correction).toMatchObject({ failures: 1, retryAfter: at(61 * MINUTE).toISOString() });
  });

  it('is forgotten when the drift is gone by itself, or a commit of the source is applied', () => {
    const failing = correction(check(applied(), T0).status, 7, T0, at(MINUTE), 'RolledBack');
    const inSync = driftStatus(
      failing,
      { checkedAt: at(2 * MINUTE), revision: COMMIT, checked: 1, drifted: [], skipped: 0 },
      at(2 * MINUTE),
    );
    expect(inSync.drift?.correction).toEqual({
      transaction: 'shop-drift-7',
      outcome: 'RolledBack',
      objects: 1,
      time: at(MINUTE).toISOString(),
    });
    const attempting = {
      ...failing,
      lastAttempted: { revision: COMMIT, transaction: 'shop-3f2a9c1', outcome: 'InProgress' as const },
    };
    const ended = (phase: 'Committed' | 'RolledBack') =>
      settledStatus(
        attempting,
        { phase, message: undefined, time: at(3 * MINUTE).toISOString() },
        [],
        at(3 * MINUTE),
      );
    expect(ended('Committed').drift?.correction).not.toHaveProperty('failures');
    expect(ended('Committed').drift?.correction).not.toHaveProperty('retryAfter');
    // A commit rolled back leaves the objects, and so the backoff, as they were.
    expect(ended('RolledBack').drift?.correction).toMatchObject({ failures: 1 });
  });

  it('is in the CRD, so a restart of janus run keeps it', () => {
    const correction = sourceStatusSchema.openApi.properties?.drift?.properties?.correction?.properties;
    expect(correction?.failures).toMatchObject({ type: 'integer', minimum: 0 });
    expect(correction?.retryAfter).toMatchObject({ type: 'string', format: 'date-time' });
  });

  it('never holds back a source that does not correct, or found no drift', () => {
    const held = correction(applied(), 7, T0, at(MINUTE), 'Failed');
    expect(afterCheck(correcting(held), 0, at(2 * MINUTE))).toEqual({ do: 'report' });
    expect(afterCheck({ spec: { drift: { interval: '10m' } }, status: held }, 1, at(2 * MINUTE))).toEqual({
      do: 'report',
    });
  });
});

describe('sourcesToCheck', () => {
  const source = (name: string, status: SourceStatus, interval = '10m') =>
    ({ metadata: { namespace: 'shop', name }, spec: { drift: { interval } }, status }) as never;
  const checked = (minutes: number) =>
    applied({ drift: { checkedAt: at(minutes * MINUTE).toISOString(), count: 0 } });

  it('starts the most overdue first, as many as the free slots, never one already being checked', () => {
    const big = source('big', checked(0));
    const never = source('never', applied());
    const recent = source('recent', checked(5));
    const notDue = source('notdue', checked(25));
    const off = source('off', applied(), '0s');
    const all = [recent, big, notDue, never, off];
    const now = at(30 * MINUTE);
    const names = (list: { metadata: { name: string } }[]) => list.map((s) => s.metadata.name);
    expect(names(sourcesToCheck(all, new Set(), 2, now))).toEqual(['never', 'big']);
    // The big source still being checked holds one slot; the next most overdue takes the other.
    expect(names(sourcesToCheck(all, new Set(['shop/big']), 2, now))).toEqual(['never']);
    expect(names(sourcesToCheck(all, new Set(['shop/big', 'shop/never']), 2, now))).toEqual([]);
    expect(names(sourcesToCheck(all, new Set(['shop/big']), 3, now))).toEqual(['never', 'recent']);
  });
});

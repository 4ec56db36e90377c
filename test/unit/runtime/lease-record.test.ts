import { describe, expect, it } from 'vitest';
import {
  claim,
  heldByOther,
  isExpired,
  type LeaderRecord,
  mayAcquire,
  microTime,
  observe,
  recordOf,
  released,
  specOf,
} from '../../../src/runtime/lease-record.ts';

const wall = Date.parse('2026-01-01T00:00:00.123Z');

function record(holderIdentity: string, renewTime: string, leaseDurationSeconds = 15): LeaderRecord {
  return { holderIdentity, leaseDurationSeconds, acquireTime: renewTime, renewTime, leaderTransitions: 2 };
}

describe('microTime', () => {
  it('has exactly six fractional digits, as the API server requires', () => {
    expect(microTime(wall)).toBe('2026-01-01T00:00:00.123000Z');
    expect(microTime(Date.parse('2026-01-01T00:00:00Z'))).toBe('2026-01-01T00:00:00.000000Z');
  });
});

describe('expiry by local observation time (clock-skew rule)', () => {
  it('counts the lease duration from when we saw the record change, not from its renewTime', () => {
    // The remote renewTime is a year old by our wall clock: skew, not expiry.
    const seen = observe(undefined, record('other', '2025-01-01T00:00:00.000000Z'), 1_000);

    expect(isExpired(seen, 1_000 + 14_999)).toBe(false);
    expect(isExpired(seen, 1_000 + 15_000)).toBe(true);
  });

  it('keeps the observation time while the record is unchanged, and restarts it on a renewal', () => {
    const first = observe(undefined, record('other', 'T1'), 1_000);
    const same = observe(first, record('other', 'T1'), 10_000);
    const renewed = observe(same, record('other', 'T2'), 12_000);

    expect(same.observedAt).toBe(1_000);
    expect(isExpired(same, 16_000)).toBe(true);
    expect(renewed.observedAt).toBe(12_000);
    expect(isExpired(renewed, 16_000)).toBe(false);
  });

  it('lets a candidate take a free, own or expired lease, and nothing else', () => {
    const held = observe(undefined, record('other', 'T1'), 0);
    const free = observe(undefined, record('', 'T1', 1), 0);

    expect(mayAcquire(held, 'me', 5_000)).toBe(false);
    expect(heldByOther(held, 'me', 5_000)).toBe(true);
    expect(mayAcquire(held, 'other', 5_000)).toBe(true);
    expect(mayAcquire(held, 'me', 15_000)).toBe(true);
    expect(mayAcquire(free, 'me', 0)).toBe(true);
    expect(heldByOther(undefined, 'me', 0)).toBe(false);
  });
});

describe('records written', () => {
  it('a renewal keeps acquireTime and transitions; a takeover counts one more; a first claim none', () => {
    const mine = record('me', '2025-12-31T23:59:00.000000Z');

    expect(claim(mine, 'me', 15, wall)).toEqual({
      ...mine,
      renewTime: '2026-01-01T00:00:00.123000Z',
    });
    expect(claim(record('other', 'T'), 'me', 15, wall)).toEqual({
      holderIdentity: 'me',
      leaseDurationSeconds: 15,
      acquireTime: '2026-01-01T00:00:00.123000Z',
      renewTime: '2026-01-01T00:00:00.123000Z',
      leaderTransitions: 3,
    });
    expect(claim(undefined, 'me', 15, wall).leaderTransitions).toBe(0);
  });

  it('a release empties the holder and shortens the duration to 1 s', () => {
    expect(released(record('me', 'T'), wall)).toEqual({
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: '2026-01-01T00:00:00.123000Z',
      renewTime: '2026-01-01T00:00:00.123000Z',
      leaderTransitions: 2,
    });
  });

  it('maps to and from the Lease spec, including its leaseTransitions name and missing fields', () => {
    const r = record('me', 'T');
    expect(
      recordOf({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: 'l' },
        spec: specOf(r),
      }),
    ).toEqual(r);
    expect(
      recordOf({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'l' } }),
    ).toEqual({
      holderIdentity: '',
      leaseDurationSeconds: 0,
      acquireTime: undefined,
      renewTime: undefined,
      leaderTransitions: 0,
    });
    expect(specOf(r).leaseTransitions).toBe(2);
  });
});

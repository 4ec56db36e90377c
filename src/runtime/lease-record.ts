/**
 * The leader-election record kept in a coordination.k8s.io/v1 Lease, and client-go's rule for
 * judging its expiry. Pure: the elector passes the times in.
 *
 * Clock-skew rule: a record expires `leaseDurationSeconds` after the moment WE last saw it change,
 * on our own monotonic clock. The remote renewTime is never compared with our clock, so skew
 * between replicas cannot make a live leader look expired (or a dead one look alive forever).
 */
import type { KubeObject } from '../kube/resources.ts';

export interface LeaseSpec {
  holderIdentity?: string | undefined;
  leaseDurationSeconds?: number | undefined;
  acquireTime?: string | undefined;
  renewTime?: string | undefined;
  leaseTransitions?: number | undefined;
  [field: string]: unknown;
}

export interface Lease extends KubeObject {
  spec?: LeaseSpec;
}

export interface LeaderRecord {
  /** Empty when nobody holds the lease (e.g. after a release). */
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: string | undefined;
  renewTime: string | undefined;
  leaderTransitions: number;
}

/** What we last saw of the record, and when on our monotonic clock it last changed. */
export interface Observation {
  record: LeaderRecord;
  observedAt: number;
}

/**
 * A MicroTime: RFC 3339 with exactly 6 fractional digits. The API server parses it with a fixed
 * layout and rejects Date.toISOString()'s 3 digits (kubernetes/kubernetes#89156).
 */
export function microTime(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export function recordOf(lease: Lease): LeaderRecord {
  const spec = lease.spec ?? {};
  return {
    holderIdentity: spec.holderIdentity ?? '',
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: spec.acquireTime,
    renewTime: spec.renewTime,
    leaderTransitions: spec.leaseTransitions ?? 0,
  };
}

export function specOf(record: LeaderRecord): LeaseSpec {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    acquireTime: record.acquireTime,
    renewTime: record.renewTime,
    leaseTransitions: record.leaderTransitions,
  };
}

/** The record as `now` sees it: the observation time moves only when the record changed. */
export function observe(previous: Observation | undefined, record: LeaderRecord, now: number): Observation {
  if (previous && sameRecord(previous.record, record)) return previous;
  return { record, observedAt: now };
}

export function isExpired(observation: Observation, now: number): boolean {
  return observation.observedAt + observation.record.leaseDurationSeconds * 1000 <= now;
}

/** May `identity` take (or keep) the lease? Yes if it is free, its own, or expired by our clock. */
export function mayAcquire(observation: Observation, identity: string, now: number): boolean {
  const holder = observation.record.holderIdentity;
  return holder === '' || holder === identity || isExpired(observation, now);
}

/** Held by someone else, and not expired by our clock. */
export function heldByOther(observation: Observation | undefined, identity: string, now: number): boolean {
  return observation !== undefined && !mayAcquire(observation, identity, now);
}

/**
 * The record to write for `identity` at `wallNow`: a renewal keeps acquireTime and the transition
 * count; a takeover counts one more transition.
 */
export function claim(
  previous: LeaderRecord | undefined,
  identity: string,
  leaseDurationSeconds: number,
  wallNow: number,
): LeaderRecord {
  const now = microTime(wallNow);
  const renewing = previous?.holderIdentity === identity;
  return {
    holderIdentity: identity,
    leaseDurationSeconds,
    acquireTime: renewing ? previous.acquireTime : now,
    renewTime: now,
    leaderTransitions: !previous ? 0 : renewing ? previous.leaderTransitions : previous.leaderTransitions + 1,
  };
}

/** client-go's ReleaseOnCancel record: no holder, a 1 s duration, so a standby takes over at once. */
export function released(previous: LeaderRecord, wallNow: number): LeaderRecord {
  const now = microTime(wallNow);
  return {
    holderIdentity: '',
    leaseDurationSeconds: 1,
    acquireTime: now,
    renewTime: now,
    leaderTransitions: previous.leaderTransitions,
  };
}

function sameRecord(a: LeaderRecord, b: LeaderRecord): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime &&
    a.renewTime === b.renewTime &&
    a.leaderTransitions === b.leaderTransitions
  );
}

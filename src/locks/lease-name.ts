/** Pure naming and timing rules of lock Leases. */
import { createHash } from 'node:crypto';
import { parseDuration } from '../api/duration.ts';
import type { Transaction } from '../api/v1alpha1/index.ts';
import { type ResolvedTarget, targetKey } from '../saga/targets.ts';

export const LEASE_PREFIX = 'janus-lock-';
const MAX_NAME = 253;
const HASH_LENGTH = 16;

/**
 * A deterministic Lease name per target: a readable prefix, then a hash of the full identity
 * (group, kind, namespace, name), so targets that differ only by API group never share a lock.
 */
export function leaseName(target: ResolvedTarget): string {
  const hash = createHash('sha256').update(targetKey(target)).digest('hex').slice(0, HASH_LENGTH);
  const readable = `${target.kind}-${target.name}`
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .slice(0, MAX_NAME - LEASE_PREFIX.length - HASH_LENGTH - 1)
    .replace(/[-.]+$/, '');
  return `${LEASE_PREFIX}${readable}-${hash}`;
}

/** Locks live in the target's namespace, so transactions in any namespace exclude each other. */
export function leaseNamespace(target: ResolvedTarget, controllerNamespace: string): string {
  return target.namespace ?? controllerNamespace;
}

/** Who holds a lock: namespace, name and uid, so re-created or same-named transactions differ. */
export function holderIdentity(txn: Pick<Transaction, 'metadata'>): string {
  return `${txn.metadata.namespace}/${txn.metadata.name}/${txn.metadata.uid}`;
}

/** "default/deploy-v2" from a holder identity, for LockWait messages. */
export function holderTransaction(identity: string): string {
  const parts = identity.split('/');
  return parts.length >= 2 ? `${parts[0]}/${parts[1]}` : identity;
}

/** Lease MicroTime: the API server insists on exactly six fractional digits. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Clock skew we tolerate between controllers before treating a lock as abandoned. */
export const SKEW_ALLOWANCE_MS = 2_000;

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}

/** When a lock frees by itself if its holder stops renewing it; undefined for a free lease. */
export function expiresAt(spec: LeaseSpec | undefined): number | undefined {
  if (!spec?.holderIdentity) return undefined;
  const renewed = Date.parse(spec.renewTime ?? spec.acquireTime ?? '');
  if (Number.isNaN(renewed)) return undefined;
  return renewed + (spec.leaseDurationSeconds ?? 0) * 1000 + SKEW_ALLOWANCE_MS;
}

export function isFree(spec: LeaseSpec | undefined, nowMs: number): boolean {
  const until = expiresAt(spec);
  return until === undefined || until <= nowMs;
}

/** A held lock is renewed once a third of its duration has passed: rarely, but never late. */
export function needsRenewal(renewedAtMs: number, durationSeconds: number, nowMs: number): boolean {
  return nowMs - renewedAtMs >= (durationSeconds * 1000) / 3;
}

/** Whole seconds for Lease.spec.leaseDurationSeconds (at least 1). */
export function durationSeconds(duration: string): number {
  return Math.max(1, Math.ceil(parseDuration(duration) / 1000));
}

export { parseDuration };

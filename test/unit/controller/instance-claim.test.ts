/**
 * Issue 34, round 4, item 3: two installations of one instance in different namespaces both
 * drove the same Transactions. Each claims its instance (for every namespace, or the one it
 * watches); another namespace's fresh claim of an overlapping scope refuses it, naming the holder.
 */
import { describe, expect, it } from 'vitest';
import {
  CLAIM_LEASE_SECONDS,
  claimedMessage,
  claimName,
  claimObject,
  conflictingClaims,
  type Installation,
  isFresh,
  isLiveInstallation,
  yieldsTo,
} from '../../../src/controller/instance-claim.ts';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const at = (secondsAgo: number) => new Date(NOW - secondsAgo * 1000);
const installation = (
  controllerNamespace: string,
  watchNamespace?: string,
  instance?: string,
): Installation => ({
  controllerNamespace,
  instance,
  watchNamespace,
});
const claim = (i: Installation, renewedSecondsAgo = 5, acquiredSecondsAgo = 100) =>
  claimObject(
    i,
    `${i.controllerNamespace}-pod`,
    at(renewedSecondsAgo),
    undefined,
    at(acquiredSecondsAgo).toISOString(),
  );

describe('claimName', () => {
  it('names the instance and the scope, and no two installations alike', () => {
    expect(claimName({ instance: undefined, watchNamespace: undefined })).toBe('janus');
    expect(claimName({ instance: 'blue', watchNamespace: undefined })).toBe('janus-blue');
    expect(claimName({ instance: undefined, watchNamespace: 'shop' })).toBe('janus.shop');
    expect(claimName({ instance: 'blue', watchNamespace: 'shop' })).toBe('janus-blue.shop');
  });
});

describe('conflictingClaims', () => {
  const cluster = installation('janus-system');
  it('a fresh claim of another namespace on the same instance and an overlapping scope', () => {
    const other = installation('janus-b');
    expect(conflictingClaims([claim(other)], cluster, NOW)).toHaveLength(1);
    // Every namespace overlaps one namespace, both ways; two namespaces do not.
    expect(conflictingClaims([claim(installation('janus-b', 'shop'))], cluster, NOW)).toHaveLength(1);
    expect(conflictingClaims([claim(other)], installation('janus-system', 'shop'), NOW)).toHaveLength(1);
    expect(
      conflictingClaims([claim(installation('janus-b', 'shop'))], installation('janus-system', 'shop'), NOW),
    ).toHaveLength(1);
    expect(
      conflictingClaims(
        [claim(installation('janus-b', 'payments'))],
        installation('janus-system', 'shop'),
        NOW,
      ),
    ).toEqual([]);
  });

  it('not its own namespace (replicas share the claim), another instance, or a claim past its lease', () => {
    expect(conflictingClaims([claim(installation('janus-system'))], cluster, NOW)).toEqual([]);
    expect(conflictingClaims([claim(installation('janus-b', undefined, 'blue'))], cluster, NOW)).toEqual([]);
    const stale = claim(installation('janus-b'), CLAIM_LEASE_SECONDS);
    expect(isFresh(stale, NOW)).toBe(false);
    expect(conflictingClaims([stale], cluster, NOW)).toEqual([]);
  });

  it('tells which of two racing installations yields: the one that acquired later, exactly one', () => {
    const older = claim(installation('janus-a'), 1, 30);
    const newer = claim(installation('janus-b', 'shop'), 1, 10);
    expect(yieldsTo(newer, older)).toBe(true);
    expect(yieldsTo(older, newer)).toBe(false);
    const tie = claim(installation('janus-c', 'shop'), 1, 30);
    expect(yieldsTo(older, tie)).not.toBe(yieldsTo(tie, older));
  });

  it('knows an installation alive by its fresh claim on the instance', () => {
    const claims = [claim(installation('janus-b', 'shop')), claim(installation('janus-c'), 120)];
    expect(isLiveInstallation(claims, undefined, 'janus-b', NOW)).toBe(true);
    expect(isLiveInstallation(claims, undefined, 'janus-c', NOW)).toBe(false);
    expect(isLiveInstallation(claims, 'blue', 'janus-b', NOW)).toBe(false);
  });
});

describe('claimObject', () => {
  it('keeps the acquire time while its namespace holds the claim, takes a stale one anew', () => {
    const me = installation('janus-system');
    const held = claim(me, 10, 500);
    const renewed = claimObject(me, 'pod-2', new Date(NOW), held);
    expect(renewed.spec).toMatchObject({
      controllerNamespace: 'janus-system',
      holderIdentity: 'pod-2',
      acquireTime: held.spec.acquireTime,
      renewTime: new Date(NOW).toISOString(),
      leaseDurationSeconds: CLAIM_LEASE_SECONDS,
    });
    expect(renewed.metadata.resourceVersion).toBe(held.metadata.resourceVersion);
    const taken = claimObject(me, 'pod-2', new Date(NOW), claim(installation('janus-b'), 90, 900));
    expect(taken.spec.acquireTime).toBe(new Date(NOW).toISOString());
    expect(claimObject(installation('x', 'shop', 'blue'), 'p', new Date(NOW)).metadata.labels).toEqual({
      'tx.janus.io/instance': 'blue',
    });
  });
});

describe('claimedMessage', () => {
  it('names the holder, its scope, this installation, and the settings that separate them', () => {
    const message = claimedMessage(installation('janus-b'), claim(installation('janus-system', 'shop')), NOW);
    expect(message).toContain('the default instance (no --instance) is served, for namespace "shop"');
    expect(message).toContain(
      'by the installation in namespace "janus-system" (InstanceClaim janus.shop, held by janus-system-pod, renewed 5s ago)',
    );
    expect(message).toContain('this installation, in namespace "janus-b" for every namespace');
    expect(message).toContain('--instance, JANUS_INSTANCE, Helm value instance');
    expect(message).toContain('--namespace, JANUS_WATCH_NAMESPACE');
  });
});

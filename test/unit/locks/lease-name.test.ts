import { describe, expect, it } from 'vitest';
import {
  durationSeconds,
  expiresAt,
  holderIdentity,
  holderTransaction,
  isFree,
  LEASE_PREFIX,
  type LeaseSpec,
  leaseName,
  leaseNamespace,
  microTime,
  needsRenewal,
  parseDuration,
  SKEW_ALLOWANCE_MS,
} from '../../../src/locks/lease-name.ts';
import type { ResolvedTarget } from '../../../src/saga/targets.ts';

/** Kubernetes' DNS-1123 subdomain rule for object names such as a Lease's. */
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const isValidName = (name: string) => name.length <= 253 && DNS_SUBDOMAIN.test(name);

const target = (over: Partial<ResolvedTarget> = {}): ResolvedTarget => ({
  apiVersion: 'v1',
  group: '',
  kind: 'ConfigMap',
  name: 'app-config',
  namespace: 'shop',
  ...over,
});

/** A valid 253-character DNS subdomain: labels of 63 characters joined by dots. */
const LONGEST_NAME = ['a'.repeat(63), 'b'.repeat(63), 'c'.repeat(63), 'd'.repeat(61)].join('.');

describe('leaseName', () => {
  it('is deterministic', () => {
    expect(leaseName(target())).toBe(leaseName(target()));
  });

  it('starts with the readable prefix, kind and name', () => {
    const name = leaseName(target());
    expect(LEASE_PREFIX).toBe('janus-lock-');
    expect(name).toMatch(/^janus-lock-configmap-app-config-[0-9a-f]{16}$/);
  });

  it('is the same for every version of one group', () => {
    const v1 = target({ apiVersion: 'apps/v1', group: 'apps', kind: 'Deployment', name: 'web' });
    expect(leaseName({ ...v1, apiVersion: 'apps/v1beta2' })).toBe(leaseName(v1));
  });

  it('differs for targets that differ only by API group', () => {
    const core = target({ kind: 'Widget', name: 'w' });
    const a = target({ apiVersion: 'a.example.io/v1', group: 'a.example.io', kind: 'Widget', name: 'w' });
    const b = target({ apiVersion: 'b.example.io/v1', group: 'b.example.io', kind: 'Widget', name: 'w' });
    expect(new Set([leaseName(core), leaseName(a), leaseName(b)]).size).toBe(3);
  });

  it('differs for targets that differ only by namespace, and from a cluster-scoped one', () => {
    const names = new Set([
      leaseName(target({ namespace: 'shop' })),
      leaseName(target({ namespace: 'billing' })),
      leaseName(target({ namespace: undefined })),
    ]);
    expect(names.size).toBe(3);
  });

  it('differs for long names that share their first 250 characters', () => {
    const a = leaseName(target({ name: `${LONGEST_NAME.slice(0, 250)}xyz` }));
    const b = leaseName(target({ name: `${LONGEST_NAME.slice(0, 250)}xyw` }));
    expect(a).not.toBe(b);
  });

  it('stays within 253 characters and a valid DNS subdomain for a 253-character target name', () => {
    expect(LONGEST_NAME).toHaveLength(253);
    const name = leaseName(target({ name: LONGEST_NAME }));
    expect(name.length).toBeLessThanOrEqual(253);
    expect(isValidName(name)).toBe(true);
  });

  it('stays a valid DNS subdomain wherever the truncation falls, even right after a dot', () => {
    // Shift a dot across the truncation point so the readable part would end in "." or "-".
    for (let dotAt = 200; dotAt < 230; dotAt++) {
      const chars = 'x'.repeat(253).split('');
      chars[dotAt] = '.';
      const name = leaseName(target({ kind: 'CustomThing', name: chars.join('') }));
      expect(isValidName(name), `dot at ${dotAt}: ${name}`).toBe(true);
    }
  });

  it('is a valid DNS subdomain for dotted names and long kinds', () => {
    for (const t of [
      target({ name: 'web.shop.example.com' }),
      target({ kind: 'VeryLongCustomResourceDefinitionKindNameForTesting', name: 'a' }),
      target({
        kind: 'ClusterRole',
        name: 'system:controller:reader'.replace(/:/g, '.'),
        namespace: undefined,
      }),
    ]) {
      expect(isValidName(leaseName(t))).toBe(true);
    }
  });
});

describe('leaseNamespace', () => {
  it("is the target's namespace, so transactions from any namespace exclude each other", () => {
    expect(leaseNamespace(target({ namespace: 'billing' }), 'janus-system')).toBe('billing');
  });

  it("is the controller's namespace for a cluster-scoped target", () => {
    expect(leaseNamespace(target({ namespace: undefined }), 'janus-system')).toBe('janus-system');
  });
});

describe('holderIdentity and holderTransaction', () => {
  const txn = { metadata: { name: 'deploy-v2', namespace: 'shop', uid: 'u-123' } };

  it('names namespace, name and uid', () => {
    expect(holderIdentity(txn)).toBe('shop/deploy-v2/u-123');
  });

  it('differs for a re-created Transaction of the same name', () => {
    expect(holderIdentity(txn)).not.toBe(holderIdentity({ metadata: { ...txn.metadata, uid: 'u-456' } }));
  });

  it('reads back "<namespace>/<name>" for messages', () => {
    expect(holderTransaction(holderIdentity(txn))).toBe('shop/deploy-v2');
  });

  it('returns a foreign identity unchanged', () => {
    expect(holderTransaction('some-other-controller')).toBe('some-other-controller');
  });
});

describe('microTime', () => {
  it('has exactly six fractional digits and is the same instant', () => {
    const ms = Date.parse('2026-03-01T12:00:00.123Z');
    expect(microTime(ms)).toBe('2026-03-01T12:00:00.123000Z');
    expect(Date.parse(microTime(ms))).toBe(ms);
    expect(microTime(Date.parse('2026-03-01T12:00:00Z'))).toBe('2026-03-01T12:00:00.000000Z');
  });
});

describe('expiresAt and isFree', () => {
  const renewed = Date.parse('2026-03-01T12:00:00.000Z');
  const held: LeaseSpec = {
    holderIdentity: 'shop/deploy-v2/u-123',
    leaseDurationSeconds: 60,
    acquireTime: microTime(renewed - 30_000),
    renewTime: microTime(renewed),
  };

  it('expires lockTimeout after the last renewal, plus the skew allowance', () => {
    expect(SKEW_ALLOWANCE_MS).toBeGreaterThan(0);
    expect(expiresAt(held)).toBe(renewed + 60_000 + SKEW_ALLOWANCE_MS);
  });

  it('counts from the acquire time when never renewed', () => {
    const { renewTime: _r, ...acquiredOnly } = held;
    expect(expiresAt(acquiredOnly)).toBe(renewed - 30_000 + 60_000 + SKEW_ALLOWANCE_MS);
  });

  it('is held through its duration and the skew allowance, and free from then on', () => {
    expect(isFree(held, renewed + 60_000)).toBe(false);
    expect(isFree(held, renewed + 60_000 + SKEW_ALLOWANCE_MS - 1)).toBe(false);
    expect(isFree(held, renewed + 60_000 + SKEW_ALLOWANCE_MS)).toBe(true);
  });

  it.each<[string, LeaseSpec | undefined]>([
    ['no lease spec', undefined],
    ['no holder', { leaseDurationSeconds: 60, renewTime: microTime(renewed) }],
    [
      'an empty holder (released)',
      { holderIdentity: '', leaseDurationSeconds: 60, renewTime: microTime(renewed) },
    ],
  ])('a lease with %s is free and never expires', (_, spec) => {
    expect(expiresAt(spec)).toBeUndefined();
    expect(isFree(spec, renewed)).toBe(true);
  });

  it('a holder without any time recorded is treated as free', () => {
    expect(isFree({ holderIdentity: 'shop/x/u' }, renewed)).toBe(true);
  });
});

describe('needsRenewal', () => {
  it('renews once a third of the duration has passed, not before', () => {
    const renewed = 1_000_000;
    expect(needsRenewal(renewed, 60, renewed + 19_999)).toBe(false);
    expect(needsRenewal(renewed, 60, renewed + 20_000)).toBe(true);
    expect(needsRenewal(renewed, 60, renewed + 59_000)).toBe(true);
  });
});

describe('parseDuration', () => {
  it.each([
    ['90s', 90_000],
    ['5m', 300_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['500ms', 500],
    ['2h45m30.5s', 9_930_500],
    ['1m1ms', 60_001],
    ['1500us', 1.5],
    ['1500µs', 1.5],
    ['2000000ns', 2],
    ['0s', 0],
  ])('parses %s as %d ms', (text, ms) => {
    expect(parseDuration(text)).toBeCloseTo(ms, 9);
  });

  it.each(['', '5', 'soon', '5m garbage', ' 5m', '5m ', '-5m', '5 m', 'm5', '1d', '.5h', '5M'])(
    'rejects %j',
    (text) => {
      expect(() => parseDuration(text)).toThrow(/is not a duration/);
    },
  );
});

describe('durationSeconds', () => {
  it('is whole seconds, rounded up, and at least 1', () => {
    expect(durationSeconds('5m')).toBe(300);
    expect(durationSeconds('1.5s')).toBe(2);
    expect(durationSeconds('500ms')).toBe(1);
    expect(durationSeconds('0s')).toBe(1);
  });

  it('rejects what parseDuration rejects', () => {
    expect(() => durationSeconds('five minutes')).toThrow();
  });
});

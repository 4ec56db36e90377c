import { describe, expect, it } from 'vitest';
import { backoffDelay, jitterUp, KeyedBackoff } from '../../../src/runtime/backoff.ts';

const policy = { baseMs: 100, capMs: 1_000, jitter: 0.5 };
const noJitter = () => 0;
const maxJitter = () => 0.999_999;

describe('backoffDelay', () => {
  it('doubles from the base and stops at the cap', () => {
    const delays = [0, 1, 2, 3, 4, 5, 40].map((attempt) => backoffDelay(attempt, policy, noJitter));
    expect(delays).toEqual([100, 200, 400, 800, 1_000, 1_000, 1_000]);
  });

  it('jitter only shortens, by at most the jitter fraction, so the cap always holds', () => {
    expect(backoffDelay(10, policy, maxJitter)).toBe(500);
    expect(backoffDelay(0, policy, maxJitter)).toBe(50);
    for (let i = 0; i < 200; i++) {
      const delay = backoffDelay(i % 12, policy);
      expect(delay).toBeGreaterThanOrEqual(Math.min(1_000, 100 * 2 ** (i % 12)) / 2);
      expect(delay).toBeLessThanOrEqual(1_000);
    }
  });

  it('stays a number after thousands of attempts, even from a zero base', () => {
    expect(backoffDelay(5000, { baseMs: 0, capMs: 1000, jitter: 0 })).toBe(0);
    expect(backoffDelay(5000, { baseMs: 10, capMs: 1000, jitter: 0 })).toBe(1000);
  });

  it('treats a negative attempt as the first', () => {
    expect(backoffDelay(-3, policy, noJitter)).toBe(100);
  });
});

describe('jitterUp', () => {
  it('stretches by up to the factor', () => {
    expect(jitterUp(2_000, 1.2, noJitter)).toBe(2_000);
    expect(jitterUp(2_000, 1.2, () => 0.5)).toBe(3_200);
  });
});

describe('KeyedBackoff', () => {
  it('grows per key independently and starts over after forget', () => {
    const backoff = new KeyedBackoff(policy, noJitter);
    expect([backoff.next('a'), backoff.next('a'), backoff.next('a')]).toEqual([100, 200, 400]);
    expect(backoff.next('b')).toBe(100);
    expect(backoff.failures('a')).toBe(3);

    backoff.forget('a');

    expect(backoff.failures('a')).toBe(0);
    expect(backoff.next('a')).toBe(100);
    expect(backoff.failures('b')).toBe(1);
  });
});

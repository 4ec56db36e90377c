import { describe, expect, it } from 'vitest';
import { retentionPolicy } from '../../../src/cli/controller-settings.ts';

const defaults = {
  prune: true,
  'no-prune': false,
  'retain-last': '10',
  'retain-min-age': '1h',
  'rollback-window': '168h',
  'prune-interval': '1m',
};

describe('retentionPolicy: the retention flags of janus run and janus controller', () => {
  it('reads the defaults as the documented policy', () => {
    expect(retentionPolicy(defaults)).toEqual({
      policy: { keepLast: 10, minAgeMs: 3_600_000, rollbackWindowMs: 168 * 3_600_000 },
      intervalMs: 60_000,
    });
  });

  it('is off with --no-prune or JANUS_PRUNE=false, after checking the other flags all the same', () => {
    expect(retentionPolicy({ ...defaults, 'no-prune': true })).toBeUndefined();
    expect(retentionPolicy({ ...defaults, prune: false })).toBeUndefined();
    expect(() => retentionPolicy({ ...defaults, prune: false, 'retain-last': 'ten' })).toThrow(
      /--retain-last/,
    );
  });

  it.each([
    [{ 'retain-last': '-1' }, '--retain-last: expected a whole number (0 or more), got "-1"'],
    [{ 'retain-last': '2.5' }, '--retain-last'],
    [{ 'retain-min-age': '7d' }, '--retain-min-age: "7d" is not a duration'],
    [{ 'rollback-window': 'forever' }, '--rollback-window'],
    [{ 'prune-interval': '10ms' }, '--prune-interval: must be at least 1s'],
  ])('refuses %j, naming the flag', (bad, message) => {
    expect(() => retentionPolicy({ ...defaults, ...bad })).toThrow(message);
  });
});

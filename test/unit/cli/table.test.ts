import { describe, expect, it } from 'vitest';
import { ageOf, formatAge, renderTable, truncate } from '../../../src/cli/table.ts';

describe('renderTable', () => {
  it('aligns columns three spaces apart like kubectl, without trailing spaces', () => {
    expect(
      renderTable(
        ['NAME', 'PHASE', 'AGE'],
        [
          ['deploy-v2', 'Committed', '5s'],
          ['x', 'Failed', ''],
        ],
      ),
    ).toBe('NAME        PHASE       AGE\ndeploy-v2   Committed   5s\nx           Failed\n');
  });
});

describe('formatAge', () => {
  it.each([
    [0, '0s'],
    [-5_000, '0s'],
    [119_000, '119s'],
    [120_000, '2m'],
    [200_000, '3m20s'],
    [600_000, '10m'],
    [179 * 60_000, '179m'],
    [3 * 3_600_000, '3h'],
    [(5 * 60 + 12) * 60_000, '5h12m'],
    [47 * 3_600_000, '47h'],
    [(3 * 24 + 4) * 3_600_000, '3d4h'],
    [100 * 86_400_000, '100d'],
    [(3 * 365 + 10) * 86_400_000, '3y10d'],
    [9 * 365 * 86_400_000, '9y'],
  ])('%d ms is %s', (ms, expected) => {
    expect(formatAge(ms)).toBe(expected);
  });

  it('ages timestamps, and says so when there is none', () => {
    expect(ageOf('2025-01-01T00:00:00Z', Date.parse('2025-01-01T00:00:42Z'))).toBe('42s');
    expect(ageOf(undefined, 0)).toBe('<unknown>');
    expect(ageOf('not a date', 0)).toBe('<unknown>');
  });
});

describe('truncate', () => {
  it('flattens newlines and cuts with an ellipsis', () => {
    expect(truncate('a\n  b', 10)).toBe('a b');
    expect(truncate('abcdefghijk', 5)).toBe('abcd…');
  });
});

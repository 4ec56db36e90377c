import { describe, expect, it } from 'vitest';
import { PollBudgetError, PollMeter } from '../../../src/gitops/poll-budget.ts';
import { flattenStrings } from '../../../src/yaml/flat-strings.ts';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);

describe('what one poll reads', () => {
  it('admits commits while their directories fit, and stops at the first that does not', () => {
    const meter = new PollMeter({ maxDirectories: 3, maxBytes: 100 });
    expect(meter.admits(A, 2, true)).toBe(true);
    expect(meter.admits(B, 1, false)).toBe(true);
    expect(meter.admits(B, 1, false)).toBe(false);
  });

  it("refuses a poll's first commit that alone changes more directories than a poll reads", () => {
    const meter = new PollMeter({ maxDirectories: 3, maxBytes: 100 });
    expect(() => meter.admits(A, 4, true)).toThrow(
      new PollBudgetError(A, 'changes 4 transaction directories, more than the 3 one poll reads'),
    );
    expect(() => new PollMeter({ maxDirectories: 3, maxBytes: 100 }).admits(A, 4, true)).toThrow(
      `commit ${A} changes 4 transaction directories, more than the 3 one poll reads; it was not read, and the poll stays at it`,
    );
  });

  it('counts bytes; past the budget a later commit waits, the first one is refused', () => {
    const later = new PollMeter({ maxDirectories: 10, maxBytes: 100 });
    expect(later.spend(A, 60, true)).toBe(true);
    expect(later.spend(B, 40, false)).toBe(true);
    expect(later.spend(B, 1, false)).toBe(false);
    const first = new PollMeter({ maxDirectories: 10, maxBytes: 100 });
    expect(() => first.spend(A, 101, true)).toThrow(
      `commit ${A} changes directories holding more than the 100 bytes of files one poll reads; it was not read, and the poll stays at it`,
    );
  });
});

describe('flattened strings', () => {
  it('leaves values as they were, aliases and all', () => {
    const shared = { x: 'y' };
    const value = { a: ['b', 1, null, { c: 'd' }], e: shared, f: shared, g: true };
    expect(flattenStrings(value)).toBe(value);
    expect(value).toEqual({ a: ['b', 1, null, { c: 'd' }], e: { x: 'y' }, f: { x: 'y' }, g: true });
  });
});

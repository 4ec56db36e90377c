/** Git's delta format (delta.ts): copies and inserts applied to a base; malformed deltas refused. */
import { describe, expect, it } from 'vitest';
import { applyDelta, deltaInstructions, deltaSizes } from '../../../src/git/delta.ts';

const base = Buffer.from('0123456789abcdefghij');

describe('applyDelta', () => {
  it('copies ranges of the base and inserts literal bytes', () => {
    // base size 20, result size 9; copy offset 10 size 4 ("abcd"), insert "XY", copy offset 0 size 3.
    const delta = Buffer.from([20, 9, 0x91, 10, 4, 2, 0x58, 0x59, 0x90, 3]);
    expect(deltaSizes(delta)).toEqual({ base: 20, result: 9, at: 2 });
    expect(applyDelta(base, delta)?.toString()).toBe('abcdXY012');
  });

  it('reads a copy of size 0 as 0x10000 bytes', () => {
    const big = Buffer.alloc(0x10000, 7);
    // base size 0x10000 (varint 0x80 0x80 0x04), result the same: one copy with no size bytes.
    const delta = Buffer.from([0x80, 0x80, 0x04, 0x80, 0x80, 0x04, 0x80]);
    expect(applyDelta(big, delta)?.equals(big)).toBe(true);
  });

  it('refuses a delta for another base, one that overruns, and the reserved op 0', () => {
    expect(applyDelta(base, Buffer.from([19, 1, 1, 0x41]))).toBeUndefined();
    expect(applyDelta(base, Buffer.from([20, 4, 0x91, 18, 4]))).toBeUndefined();
    expect(applyDelta(base, Buffer.from([20, 2, 1, 0x41]))).toBeUndefined(); // result short
    expect(applyDelta(base, Buffer.from([20, 1, 0]))).toBeUndefined();
    expect(deltaSizes(Buffer.from([0x80]))).toBeUndefined();
  });
});

describe('deltaInstructions', () => {
  it('counts copies and inserts without applying them, and refuses the reserved op 0', () => {
    expect(deltaInstructions(Buffer.from([20, 9, 0x91, 10, 4, 2, 0x58, 0x59, 0x90, 3]))).toBe(3);
    expect(deltaInstructions(Buffer.from([20, 0]))).toBe(0);
    expect(deltaInstructions(Buffer.from([20, 9, 0x91, 10, 4, 0]))).toBeUndefined();
  });

  it('applies a delta of many one-byte copies as it counts them', () => {
    const ops = Array.from({ length: 1000 }, (_, i) => [0x91, i % 20, 1]).flat();
    const delta = Buffer.from([20, 0xe8, 0x07, ...ops]); // result 1000 bytes
    expect(deltaInstructions(delta)).toBe(1000);
    expect(applyDelta(base, delta)?.toString()).toBe(base.toString().repeat(50));
  });
});

import { deflateSync, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { deflateObject } from '../../../src/git/deflate.ts';

/** The window a zlib stream declares in its first byte (CINFO + 8), as a power of two. */
const windowBitsOf = (stream: Buffer) => ((stream[0] ?? 0) >> 4) + 8;

const text = (bytes: number) =>
  Buffer.from(
    Array.from({ length: bytes }, (_, i) => `line ${i % 97}: value ${i % 13}\n`)
      .join('')
      .slice(0, bytes),
  );

describe('deflateObject', () => {
  it('makes zlib streams any reader inflates back, from empty to larger than its window', () => {
    for (const size of [0, 1, 200, 1_000, 7_930, 8_192, 100_000]) {
      const bytes = text(size);
      expect(inflateSync(deflateObject(bytes)).equals(bytes), `${size} bytes`).toBe(true);
    }
  });

  it('sizes the window to the object, never past 8 KiB, and loses nothing on an object that fits', () => {
    expect(windowBitsOf(deflateObject(text(100)))).toBe(9);
    expect(windowBitsOf(deflateObject(text(1_500)))).toBe(11);
    expect(windowBitsOf(deflateObject(text(100_000)))).toBe(13);
    for (const size of [100, 600, 1_500, 5_000, 7_930]) {
      const bytes = text(size);
      expect(deflateObject(bytes).length, `${size} bytes`).toBeLessThanOrEqual(deflateSync(bytes).length);
    }
  });
});

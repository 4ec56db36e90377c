/**
 * zlib for the objects Janus writes itself: a results commit's blob, trees and commit (a loose
 * object each, and an entry of the push's pack), hundreds at once after a big poll, most under
 * 1 KiB. deflateSync with zlib's defaults allocates ~260 KB of state per call (a 32 KiB window
 * twice over, 64 KiB hash and pending buffers) and zeroes part of it; for a 500-byte object that
 * is most of the work, and under `janus run`'s malloc setting (node-flags.ts: blocks of 32 KiB
 * and more are mapped and unmapped each time) it was 125 µs a call instead of 10: 4,000 calls,
 * 0.5 s of a 400-directory poll. The window and hash are sized to the object instead: an object
 * that fits the window compresses exactly as well, no allocation reaches 32 KiB (window 2^13:
 * 16 KiB each for window, prev, head and pending), and a larger object only finds its matches
 * within 8 KiB. Any window size is a valid zlib stream; git and isomorphic-git read them alike.
 */
import { deflateSync } from 'node:zlib';

/**
 * deflateSync's output buffer: its default, 16 KiB, is allocated per call and kept alive by the
 * result (a slice of it) until collected; for 2,000 objects of ~1 KiB that is 30 MiB of resident
 * memory that the heap's size never asks V8 to collect. 1 KiB holds most results' objects whole.
 */
const CHUNK_BYTES = 1024;
/** zlib keeps this much lookahead besides the window (MIN_LOOKAHEAD). */
const LOOKAHEAD = 262;

/** `bytes` as a zlib stream, with a window no larger than it needs (at most 8 KiB). */
export function deflateObject(bytes: Uint8Array): Buffer {
  const windowBits = Math.min(13, Math.max(9, Math.ceil(Math.log2(bytes.length + LOOKAHEAD))));
  // As zlib's defaults pair them (15 and 8): a hash of as many entries as the window.
  const memLevel = windowBits - 7;
  return deflateSync(bytes, { chunkSize: CHUNK_BYTES, windowBits, memLevel });
}

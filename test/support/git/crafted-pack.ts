/**
 * Packs written byte by byte, as a hostile server or a crafted push could send them: deltas by
 * offset or by id on any entry, in any order, with any sizes their headers claim.
 */
import { createHash } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { entryHeader } from '../../../src/git/pack-writer.ts';

export type CraftedEntry =
  /** A whole object; `size`: what its header claims, when not its content's length. */
  | { type: 'commit' | 'tree' | 'blob'; content: Buffer; size?: number }
  /** A delta on the entry at index `ofs` of the same pack (it must come earlier). */
  | { ofs: number; delta: Buffer }
  /** A delta on the object named `ref`, wherever it is. */
  | { ref: string; delta: Buffer };

const TYPE_CODES = { commit: 1, tree: 2, blob: 3 } as const;

export function craftPack(entries: readonly CraftedEntry[]): Buffer {
  const head = Buffer.alloc(12);
  head.write('PACK', 0, 'latin1');
  head.writeUInt32BE(2, 4);
  head.writeUInt32BE(entries.length, 8);
  const parts: Buffer[] = [head];
  const offsets: number[] = [];
  let at = head.length;
  for (const entry of entries) {
    offsets.push(at);
    let part: Buffer;
    if ('type' in entry) {
      part = Buffer.concat([
        entryHeader(TYPE_CODES[entry.type], entry.size ?? entry.content.length),
        deflateSync(entry.content),
      ]);
    } else if ('ofs' in entry) {
      const back = at - (offsets[entry.ofs] ?? Number.NaN);
      part = Buffer.concat([entryHeader(6, entry.delta.length), offsetBytes(back), deflateSync(entry.delta)]);
    } else {
      part = Buffer.concat([
        entryHeader(7, entry.delta.length),
        Buffer.from(entry.ref, 'hex'),
        deflateSync(entry.delta),
      ]);
    }
    parts.push(part);
    at += part.length;
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([body, createHash('sha1').update(body).digest()]);
}

/** gitformat-pack(5)'s offset encoding: 7 bits a byte, most significant first, each less one. */
function offsetBytes(back: number): Buffer {
  let n = back;
  const bytes = [n & 0x7f];
  while (n >= 0x80) {
    n = Math.floor(n / 128) - 1;
    bytes.unshift(0x80 | (n & 0x7f));
  }
  return Buffer.from(bytes);
}

export type DeltaStep = { copy: number; size: number } | { insert: Buffer };

/** A delta from a base of `baseSize` bytes to `resultSize` bytes, made of `steps`. */
export function craftDelta(baseSize: number, resultSize: number, steps: readonly DeltaStep[]): Buffer {
  const bytes: number[] = [...varint(baseSize), ...varint(resultSize)];
  for (const step of steps) {
    if ('insert' in step) {
      bytes.push(step.insert.length, ...step.insert);
      continue;
    }
    let op = 0x80;
    const args: number[] = [];
    for (let i = 0; i < 4; i++) {
      const byte = Math.floor(step.copy / 2 ** (8 * i)) & 0xff;
      if (byte) {
        op |= 1 << i;
        args.push(byte);
      }
    }
    for (let i = 0; i < 3; i++) {
      const byte = Math.floor(step.size / 2 ** (8 * i)) & 0xff;
      if (byte) {
        op |= 16 << i;
        args.push(byte);
      }
    }
    bytes.push(op, ...args);
  }
  return Buffer.from(bytes);
}

/** A delta that copies all of a base of `size` bytes and appends `tail`. */
export function appendDelta(size: number, tail: string): Buffer {
  const steps: DeltaStep[] = [];
  for (let at = 0; at < size; at += 0xff0000) steps.push({ copy: at, size: Math.min(0xff0000, size - at) });
  return craftDelta(size, size + tail.length, [...steps, { insert: Buffer.from(tail) }]);
}

export function objectId(type: string, content: Buffer): string {
  return createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
}

function varint(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  do {
    let byte = rest % 128;
    rest = Math.floor(rest / 128);
    if (rest > 0) byte |= 0x80;
    bytes.push(byte);
  } while (rest > 0);
  return bytes;
}

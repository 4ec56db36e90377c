/**
 * A Git packfile (gitformat-pack(5), version 2) of whole objects: "PACK", the version, the
 * count, then per object a type-and-size header and the zlib of its content, then the SHA-1 of
 * everything before. No deltas: a push's objects are a results commit's few small files and
 * trees, which the server stores as it likes; a pack without deltas is never "thin", so it
 * needs nothing from the receiver to be read.
 */
import { createHash } from 'node:crypto';
import { deflateObject } from './deflate.ts';

export type PackObjectType = 'commit' | 'tree' | 'blob';

/** An object as its content (without git's "type size\0" header). */
export interface PackObject {
  readonly type: PackObjectType;
  readonly content: Uint8Array;
}

const TYPE_CODES: Readonly<Record<PackObjectType, number>> = { commit: 1, tree: 2, blob: 3 };

/** The pack as chunks, in order (their concatenation is the pack). */
export function writePack(objects: readonly PackObject[]): Buffer[] {
  const hash = createHash('sha1');
  const chunks: Buffer[] = [];
  const add = (chunk: Buffer) => {
    hash.update(chunk);
    chunks.push(chunk);
  };
  const head = Buffer.alloc(12);
  head.write('PACK', 0, 'latin1');
  head.writeUInt32BE(2, 4);
  head.writeUInt32BE(objects.length, 8);
  add(head);
  for (const object of objects) {
    add(entryHeader(TYPE_CODES[object.type], object.content.length));
    add(deflateObject(object.content));
  }
  chunks.push(hash.digest());
  return chunks;
}

/**
 * The type in bits 6–4 of the first byte, the size little-endian in its low 4 bits and then 7
 * bits per byte; the high bit says another byte follows.
 */
export function entryHeader(typeCode: number, size: number): Buffer {
  const bytes: number[] = [];
  let rest = Math.floor(size / 16);
  let byte = (typeCode << 4) | (size % 16);
  while (rest > 0) {
    bytes.push(byte | 0x80);
    byte = rest % 128;
    rest = Math.floor(rest / 128);
  }
  bytes.push(byte);
  return Buffer.from(bytes);
}

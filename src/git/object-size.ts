/**
 * The size of a Git object, read from Git's own headers without inflating its content,
 * so that an oversized file is refused before it costs its size in memory.
 *
 * isomorphic-git has no call for this: `readObject` inflates a packed object whatever `format`
 * asks for (`'deflated'` returns the raw bytes of loose objects only), and its pack index class
 * is internal. Both storage formats carry the size up front (gitformat-pack(5)):
 *
 * - a loose object (`objects/ab/cdef…`) is zlib of `"<type> <size>\0<content>"`: inflating its
 *   first bytes gives the size;
 * - a packed object is found through its pack's `.idx` (version 2: fan-out table, sorted oids,
 *   offsets) and starts with a header holding its type and inflated size. For a delta that is
 *   the size of the delta; the object's own size is the second number at the start of the delta
 *   data (after the size of its base), read by inflating its first bytes.
 *
 * Only a few bytes are read and inflated per object, whatever its size.
 */
import { join } from 'node:path';
import { createInflate } from 'node:zlib';
import { ObjectReadCache, readLoose } from './object-read-cache.ts';
import { OFS_DELTA, REF_DELTA } from './packed-object.ts';

/** Compressed bytes handed to zlib to find a header; the header itself is a few bytes. */
const HEAD_WINDOW = 4096;

/**
 * The size in bytes of object `oid` in `gitdir` once inflated (for a delta: once applied), or
 * undefined when it is not there or not in a format read here (then the caller reads the object
 * the ordinary way). `reads`: the operation's cache; without one, a cache for this call alone.
 */
export async function readObjectSize(
  gitdir: string,
  oid: string,
  reads?: ObjectReadCache,
): Promise<number | undefined> {
  return withReads(gitdir, reads, async (cache) => {
    // Packed first: the pack's index is in memory, and an object stored both packed and loose
    // (a fetch may bring an object also written loose) has the same content, so the same size.
    const packed = await cache.findPacked(oid);
    const size = packed && (await packedSize(cache, packed.path, packed.offset));
    if (size !== undefined) return size;
    const head = await readLoose(looseObjectPath(gitdir, oid), HEAD_WINDOW);
    if (head) return looseSize(head);
    if (packed) return undefined;
    const added = await cache.findPacked(oid, true); // a pack written since the listing
    return added ? packedSize(cache, added.path, added.offset) : undefined;
  });
}

/**
 * The first `length` bytes of object `oid`'s content (all of it when it is shorter) and its type,
 * inflating only those: for a commit whose message is a gigabyte, the headers cost what they
 * are. undefined when the object is not there or is stored only as a delta (its start would need
 * its base): the caller then decides from its size alone.
 */
export async function readObjectStart(
  gitdir: string,
  oid: string,
  length: number,
  reads?: ObjectReadCache,
): Promise<{ type: string; size: number; start: Buffer } | undefined> {
  return withReads(gitdir, reads, async (cache) => {
    // Deflate adds at most a few bytes per 16 KiB block: this much input yields `length` bytes.
    const window = length + 1024;
    const packed = await cache.findPacked(oid);
    const whole = packed && (await packedStart(cache, packed.path, packed.offset, length, window));
    if (whole) return whole;
    // Not packed, or packed as a delta: a loose copy, when there is one, gives the start.
    const head = await readLoose(looseObjectPath(gitdir, oid), window + 64);
    if (head) return looseStart(head, length, window);
    if (packed) return undefined;
    const added = await cache.findPacked(oid, true); // a pack written since the listing
    return added ? packedStart(cache, added.path, added.offset, length, window) : undefined;
  });
}

async function withReads<T>(
  gitdir: string,
  reads: ObjectReadCache | undefined,
  fn: (cache: ObjectReadCache) => Promise<T>,
): Promise<T> {
  if (reads) return fn(reads);
  const own = new ObjectReadCache(gitdir);
  try {
    return await fn(own);
  } finally {
    await own.close();
  }
}

function looseObjectPath(gitdir: string, oid: string): string {
  return join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2));
}

async function looseStart(
  head: Buffer,
  length: number,
  window: number,
): Promise<{ type: string; size: number; start: Buffer } | undefined> {
  const out = await inflateHead(head, (o) => o.length >= window, window + 64);
  const nul = out.indexOf(0);
  const match = /^(commit|tree|blob|tag) (\d+)$/.exec(out.subarray(0, Math.max(nul, 0)).toString('latin1'));
  if (nul < 0 || !match) return undefined;
  return { type: match[1] ?? '', size: Number(match[2]), start: out.subarray(nul + 1, nul + 1 + length) };
}

/** undefined: a delta. */
async function packedStart(
  cache: ObjectReadCache,
  packPath: string,
  offset: number,
  length: number,
  window: number,
): Promise<{ type: string; size: number; start: Buffer } | undefined> {
  const bytes = await cache.readPack(packPath, offset, 32 + window);
  const header = packHeader(bytes);
  const type = ['', 'commit', 'tree', 'blob', 'tag'][header.type];
  if (type === undefined) return undefined;
  const out = await inflateHead(bytes.subarray(header.at), (o) => o.length >= length, window);
  return { type, size: header.size, start: out.subarray(0, length) };
}

/** undefined: a loose object that does not parse. */
async function looseSize(head: Buffer): Promise<number | undefined> {
  const text = await inflateHead(head, (out) => out.includes(0));
  const match = /^(?:commit|tree|blob|tag) (\d+)\0/.exec(text.toString('latin1'));
  return match ? Number(match[1]) : undefined;
}

async function packedSize(
  cache: ObjectReadCache,
  packPath: string,
  offset: number,
): Promise<number | undefined> {
  const bytes = await cache.readPack(packPath, offset, 32 + HEAD_WINDOW);
  const header = packHeader(bytes);
  const { type, size } = header;
  let at = header.at;
  if (type >= 1 && type <= 4) return size; // commit, tree, blob, tag: the size is the object's
  if (type === OFS_DELTA) {
    while ((bytes[at++] ?? 0) & 0x80); // the base's offset, relative to this object
  } else if (type === REF_DELTA) {
    at += 20; // the base's oid
  } else return undefined;
  // The delta data starts with the base's size, then the result's, as base-128 numbers.
  const delta = await inflateHead(bytes.subarray(at), (out) => varints(out, 2) !== undefined);
  return varints(delta, 2)?.[1];
}

/** A pack entry's header: type (3 bits) and size, little-endian base-128 after the first 4 bits. */
function packHeader(bytes: Uint8Array): { type: number; size: number; at: number } {
  let at = 0;
  let byte = bytes[at++] ?? 0;
  const type = (byte >> 4) & 7;
  let size = byte & 15;
  for (let shift = 4; byte & 0x80; shift += 7) {
    byte = bytes[at++] ?? 0;
    size += (byte & 0x7f) * 2 ** shift;
  }
  return { type, size, at };
}

/** The first `count` base-128 little-endian numbers of `bytes`, if they are complete. */
function varints(bytes: Uint8Array, count: number): number[] | undefined {
  const numbers: number[] = [];
  let at = 0;
  while (numbers.length < count) {
    let value = 0;
    let byte: number;
    let shift = 0;
    do {
      if (at >= bytes.length) return undefined;
      byte = bytes[at++] ?? 0;
      value += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    numbers.push(value);
  }
  return numbers;
}

/**
 * Inflates `compressed` only until `enough` says so (or `cap` bytes came out): zlib produces output in
 * 1 KiB chunks, and the stream is destroyed after the first one that satisfies `enough`, so a
 * small header in front of a gigabyte of zeros costs a kilobyte. A truncated input gives what
 * could be inflated.
 */
function inflateHead(
  compressed: Uint8Array,
  enough: (out: Buffer) => boolean,
  cap = 64 * 1024,
): Promise<Buffer> {
  return new Promise((resolve) => {
    const inflate = createInflate({ chunkSize: 1024 });
    let out = Buffer.alloc(0);
    const done = () => {
      inflate.destroy();
      resolve(out);
    };
    inflate.on('data', (chunk: Buffer) => {
      out = Buffer.concat([out, chunk]);
      if (enough(out) || out.length >= cap) done();
    });
    inflate.on('end', done);
    inflate.on('error', done);
    inflate.end(compressed);
  });
}

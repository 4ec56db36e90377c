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
import { access, open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInflate } from 'node:zlib';

/** Parsed `.idx` files of one gitdir, by path; an ObjectStore keeps one for its operation. */
export type PackIndexCache = Map<string, Promise<PackIndex | undefined>>;

const OFS_DELTA = 6;
const REF_DELTA = 7;
/** Compressed bytes handed to zlib to find a header; the header itself is a few bytes. */
const HEAD_WINDOW = 4096;

/**
 * The size in bytes of object `oid` in `gitdir` once inflated (for a delta: once applied), or
 * undefined when it is not there or not in a format read here (then the caller reads the object
 * the ordinary way).
 */
export async function readObjectSize(
  gitdir: string,
  oid: string,
  packs: PackIndexCache = new Map(),
): Promise<number | undefined> {
  const place = await locate(gitdir, oid, packs);
  if (place === undefined) return undefined;
  if (place.kind === 'loose') return looseSize(place.path);
  return packedSize(place.path, place.offset);
}

/**
 * The first `length` bytes of object `oid`'s content (all of it when it is shorter) and its type,
 * inflating only those: for a commit whose message is a gigabyte, the headers cost what they
 * are. undefined when the object is not there or is stored as a delta (its start would need its
 * base): the caller then decides from its size alone.
 */
export async function readObjectStart(
  gitdir: string,
  oid: string,
  length: number,
  packs: PackIndexCache = new Map(),
): Promise<{ type: string; size: number; start: Buffer } | undefined> {
  const place = await locate(gitdir, oid, packs);
  if (place === undefined) return undefined;
  // Deflate adds at most a few bytes per 16 KiB block: this much input yields `length` bytes.
  const window = length + 1024;
  if (place.kind === 'loose') {
    const head = await readAt(place.path, 0, window + 64);
    const out = await inflateHead(head, (o) => o.length >= window, window + 64);
    const nul = out.indexOf(0);
    const match = /^(commit|tree|blob|tag) (\d+)$/.exec(out.subarray(0, Math.max(nul, 0)).toString('latin1'));
    if (nul < 0 || !match) return undefined;
    return { type: match[1] ?? '', size: Number(match[2]), start: out.subarray(nul + 1, nul + 1 + length) };
  }
  const bytes = await readAt(place.path, place.offset, 32 + window);
  const header = packHeader(bytes);
  const type = ['', 'commit', 'tree', 'blob', 'tag'][header.type];
  if (type === undefined) return undefined; // a delta
  const out = await inflateHead(bytes.subarray(header.at), (o) => o.length >= length, window);
  return { type, size: header.size, start: out.subarray(0, length) };
}

type Place = { kind: 'loose'; path: string } | { kind: 'packed'; path: string; offset: number };

/** Where object `oid` is stored: its loose file, or its pack and offset. */
async function locate(gitdir: string, oid: string, packs: PackIndexCache): Promise<Place | undefined> {
  const loose = join(gitdir, 'objects', oid.slice(0, 2), oid.slice(2));
  if (await exists(loose)) return { kind: 'loose', path: loose };
  const dir = join(gitdir, 'objects', 'pack');
  const indexes = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.idx'));
  for (const name of indexes) {
    const path = join(dir, name);
    let index = packs.get(path);
    if (!index) {
      index = readFile(path).then(
        (bytes) => PackIndex.parse(bytes),
        () => undefined,
      );
      packs.set(path, index);
    }
    const offset = (await index)?.offset(oid);
    if (offset !== undefined) return { kind: 'packed', path: path.replace(/\.idx$/, '.pack'), offset };
  }
  return undefined;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return false;
      throw error;
    },
  );
}

/** undefined: a loose object that does not parse. */
async function looseSize(path: string): Promise<number | undefined> {
  const head = await readAt(path, 0, HEAD_WINDOW);
  const text = await inflateHead(head, (out) => out.includes(0));
  const match = /^(?:commit|tree|blob|tag) (\d+)\0/.exec(text.toString('latin1'));
  return match ? Number(match[1]) : undefined;
}

async function packedSize(packPath: string, offset: number): Promise<number | undefined> {
  const bytes = await readAt(packPath, offset, 32 + HEAD_WINDOW);
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

async function readAt(path: string, position: number, length: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, position);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** A version 2 pack index: where in its pack each object starts. */
export class PackIndex {
  readonly #bytes: Buffer;
  readonly #count: number;

  private constructor(bytes: Buffer, count: number) {
    this.#bytes = bytes;
    this.#count = count;
  }

  /** undefined for anything but a well-formed version 2 index. */
  static parse(bytes: Buffer): PackIndex | undefined {
    if (bytes.length < 8 + 1024 || bytes.readUInt32BE(0) !== 0xff744f63 || bytes.readUInt32BE(4) !== 2)
      return undefined;
    const count = bytes.readUInt32BE(8 + 255 * 4);
    if (bytes.length < 8 + 1024 + count * 28 + 40) return undefined;
    return new PackIndex(bytes, count);
  }

  /** The object's offset in the pack, or undefined when the pack does not hold it. */
  offset(oid: string): number | undefined {
    const key = Buffer.from(oid, 'hex');
    if (key.length !== 20) return undefined;
    const bytes = this.#bytes;
    const first = key[0] ?? 0;
    let lo = first === 0 ? 0 : bytes.readUInt32BE(8 + (first - 1) * 4);
    let hi = bytes.readUInt32BE(8 + first * 4);
    const oids = 8 + 1024;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const cmp = key.compare(bytes, oids + mid * 20, oids + mid * 20 + 20);
      if (cmp === 0) return this.#offsetAt(mid);
      if (cmp < 0) hi = mid;
      else lo = mid + 1;
    }
    return undefined;
  }

  #offsetAt(i: number): number | undefined {
    const offsets = 8 + 1024 + this.#count * 24;
    const small = this.#bytes.readUInt32BE(offsets + i * 4);
    if (!(small & 0x80000000)) return small;
    const large = offsets + this.#count * 4 + (small & 0x7fffffff) * 8;
    if (large + 8 > this.#bytes.length) return undefined;
    return Number(this.#bytes.readBigUInt64BE(large));
  }
}

/**
 * Whole objects read straight from a pack (gitformat-pack(5)) for one ObjectStore operation:
 * one read of the pack through the operation's kept handle, inflated in this thread, deltas
 * applied against bases kept for the operation.
 *
 * isomorphic-git reads a packed object by first trying it as a loose file (a failed open), then
 * listing `objects/pack` again, inflating in JavaScript and hashing the result through WebCrypto:
 * several thread-pool round trips per object. A poll of a commit adding 400 directories reads
 * ~2,800 objects, nearly all packed (a fetch brings packs): that was most of its reading time.
 *
 * Anything not read here (a loose object, one in a pack written since the listing, a delta
 * whose base is elsewhere, a malformed entry) answers undefined: the caller reads it the
 * ordinary way, through isomorphic-git.
 */
import { inflateSync } from 'node:zlib';
import { applyDelta, deltaSizes } from './delta.ts';
import type { ObjectReadCache } from './object-read-cache.ts';

export type ObjectType = 'commit' | 'tree' | 'blob' | 'tag';

/** An object's type and size; its content when it was at most the size asked for. */
export interface PackedObject {
  /** undefined only for an object too large to read (a delta's type is its base's). */
  type: ObjectType | undefined;
  size: number;
  content?: Buffer;
}

/** A pack entry's type by its code; 6 and 7 are deltas (gitformat-pack(5)). */
export const TYPES: readonly (ObjectType | undefined)[] = [undefined, 'commit', 'tree', 'blob', 'tag'];
export const OFS_DELTA = 6;
export const REF_DELTA = 7;
/** Bytes read at an entry's offset first: its header and, for most objects, all of it. */
const FIRST_READ = 16 * 1024;
/** Inflated delta bases kept per operation (bytes): a delta chain's bases are read once. */
const DELTA_BASE_CACHE_BYTES = 8 * 1024 * 1024;
/** Deeper chains are read by isomorphic-git (git's default --depth is 50). */
const MAX_CHAIN = 100;
/** A base larger than this is left to isomorphic-git (a small delta may stand on a huge base). */
const MAX_BASE_BYTES = 64 * 1024 * 1024;

type Resolved = { type: ObjectType; content: Buffer };

export class PackedObjects {
  readonly #reads: ObjectReadCache;
  readonly #bases = new Map<string, Resolved>();
  #baseBytes = 0;

  constructor(reads: ObjectReadCache) {
    this.#reads = reads;
  }

  /** Object `oid` with its content when it is at most `maxBytes`; undefined: not read here. */
  async read(oid: string, maxBytes: number): Promise<PackedObject | undefined> {
    const at = await this.#reads.findPacked(oid);
    return at && this.#entry(at.path, at.offset, maxBytes, 0);
  }

  async #entry(
    pack: string,
    offset: number,
    maxBytes: number,
    depth: number,
  ): Promise<PackedObject | undefined> {
    const cached = this.#bases.get(`${pack}:${offset}`);
    if (cached) {
      const size = cached.content.length;
      return size > maxBytes
        ? { type: cached.type, size }
        : { type: cached.type, size, content: cached.content };
    }
    let bytes = await this.#reads.readPack(pack, offset, FIRST_READ);
    const header = entryHeader(bytes);
    if (!header) return undefined;
    const type = TYPES[header.type];
    // Sizes come from the header before anything more is read: a blob of a gigabyte of zeros is
    // a few MiB in the pack, and its header alone says it is too large.
    if (type !== undefined && header.size > maxBytes) return { type, size: header.size };
    if (type === undefined && header.type !== OFS_DELTA && header.type !== REF_DELTA) return undefined;
    // A delta is at most 8 bytes of instruction per byte it makes (a copy of one byte), plus its
    // two sizes: a longer one makes more than maxBytes, which the ordinary read measures.
    if (type === undefined && header.size > 8 * maxBytes + 20) return undefined;
    const needed = header.at + deflateBound(header.size);
    if (bytes.length < needed && bytes.length === FIRST_READ)
      bytes = await this.#reads.readPack(pack, offset, needed);
    const data = bytes.subarray(header.at);
    if (type !== undefined) {
      const content = inflated(data, header.size);
      return content && { type, size: header.size, content };
    }
    const base = header.type === OFS_DELTA ? baseOffset(data, offset) : baseOid(data);
    if (!base) return undefined;
    const delta = inflated(data.subarray(base.at), header.size);
    const sizes = delta && deltaSizes(delta);
    if (!sizes) return undefined;
    if (sizes.result > maxBytes) return { type: undefined, size: sizes.result };
    if (depth >= MAX_CHAIN || sizes.base > MAX_BASE_BYTES) return undefined;
    const located =
      'offset' in base ? { path: pack, offset: base.offset } : await this.#reads.findPacked(base.oid);
    const from = located && (await this.#base(located.path, located.offset, depth + 1));
    if (!from) return undefined;
    const content = applyDelta(from.content, delta);
    return content && { type: from.type, size: content.length, content };
  }

  async #base(pack: string, offset: number, depth: number): Promise<Resolved | undefined> {
    const object = await this.#entry(pack, offset, MAX_BASE_BYTES, depth);
    if (object?.type === undefined || !object.content) return undefined;
    const resolved = { type: object.type, content: object.content };
    this.#keep(`${pack}:${offset}`, resolved);
    return resolved;
  }

  /** Keeps a base, forgetting the oldest beyond DELTA_BASE_CACHE_BYTES. */
  #keep(key: string, resolved: Resolved): void {
    if (this.#bases.has(key) || resolved.content.length > DELTA_BASE_CACHE_BYTES) return;
    this.#bases.set(key, resolved);
    this.#baseBytes += resolved.content.length;
    for (const [oldest, kept] of this.#bases) {
      if (this.#baseBytes <= DELTA_BASE_CACHE_BYTES) break;
      this.#bases.delete(oldest);
      this.#baseBytes -= kept.content.length;
    }
  }
}

/** A pack entry's header: type (3 bits) and size, little-endian base-128 after the first 4 bits. */
export function entryHeader(bytes: Uint8Array): { type: number; size: number; at: number } | undefined {
  let at = 0;
  let byte = bytes[at++];
  if (byte === undefined) return undefined;
  const type = (byte >> 4) & 7;
  let size = byte & 15;
  for (let shift = 4; byte & 0x80; shift += 7) {
    byte = bytes[at++];
    if (byte === undefined || shift > 49) return undefined;
    size += (byte & 0x7f) * 2 ** shift;
  }
  return { type, size, at };
}

/** An OFS_DELTA's base: the offset written (big-endian base-128, plus one per continued byte) back from this entry. */
export function baseOffset(data: Uint8Array, offset: number): { offset: number; at: number } | undefined {
  let at = 0;
  let byte = data[at++] ?? 0;
  let back = byte & 0x7f;
  while (byte & 0x80) {
    byte = data[at++] ?? 0;
    back = (back + 1) * 128 + (byte & 0x7f);
    if (at > 9) return undefined;
  }
  return back > 0 && back <= offset ? { offset: offset - back, at } : undefined;
}

export function baseOid(data: Uint8Array): { oid: string; at: number } | undefined {
  return data.length >= 20 ? { oid: Buffer.from(data.subarray(0, 20)).toString('hex'), at: 20 } : undefined;
}

/** zlib's compressBound, with room: the compressed size of `size` bytes is at most this. */
function deflateBound(size: number): number {
  return size + Math.ceil(size / 1024) + 64;
}

/**
 * The zlib stream at the start of `data`, inflated, when it is exactly `size` bytes. Its output
 * buffer is sized to the object: zlib's default, 16 KiB, would be kept alive by every smaller
 * object read (a slice of it) until collected.
 */
function inflated(data: Uint8Array, size: number): Buffer | undefined {
  try {
    const out = inflateSync(data, { maxOutputLength: Math.max(size, 1), chunkSize: Math.max(size + 1, 64) });
    return out.length === size ? out : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Indexing a pack a fetch received (gitformat-pack(5)), as `git index-pack` does: every entry's
 * object id, CRC-32 and offset, written as a version 2 `.idx` (the same bytes git writes).
 *
 * isomorphic-git's fetch indexes with the whole response held twice (its chunks and their
 * concatenation), up to 32 MiB of inflated objects kept, and each object hashed through
 * WebCrypto (a thread-pool round trip per object): a 13 MB pack of 400 directories raised a
 * poll's peak by ~45 MiB and spent half of its ~0.7 s waiting. Here the pack is read once from
 * disk, objects are hashed in this thread, and inflated delta bases are kept within a budget.
 */
import { createHash } from 'node:crypto';
import { finished } from 'node:stream/promises';
import { crc32, createInflate, inflateSync } from 'node:zlib';
import { applyDelta, deltaSizes } from './delta.ts';
import {
  baseOffset,
  baseOid,
  entryHeader,
  type ObjectType,
  OFS_DELTA,
  REF_DELTA,
  TYPES,
} from './packed-object.ts';
import { ProtocolError } from './receive-pack-protocol.ts';

export interface IndexedPack {
  /** The pack's own checksum (hex): its name is pack-<checksum>.pack. */
  checksum: string;
  /** The version 2 index. */
  idx: Buffer;
  objects: number;
}

export interface IndexLimits {
  /** The largest object inflated (bytes); a larger one fails the fetch. */
  maxObjectBytes: number;
  /** Inflated delta bases kept while resolving (bytes). */
  baseCacheBytes: number;
}

interface Entry {
  offset: number;
  /** Where the zlib stream starts. */
  data: number;
  size: number;
  type: ObjectType | undefined;
  /** A delta's base: its offset, or its id (a ref-delta). */
  base?: number | string;
  oid?: string;
  crc: number;
}

/**
 * A whole object larger than this is hashed as it inflates, never held: a commit message or a
 * file of hundreds of MiB costs its CPU, not its size in memory.
 */
const STREAM_ABOVE = 4 * 1024 * 1024;
/** git writes chains of at most 4,095 deltas (pack.depth); a longer one is a crafted pack. */
const MAX_DELTA_DEPTH = 10_000;

/** Indexes `pack`, a whole pack file; throws ProtocolError for anything malformed. */
export async function indexPack(pack: Buffer, limits: IndexLimits): Promise<IndexedPack> {
  if (pack.length < 32 || pack.toString('latin1', 0, 4) !== 'PACK') throw broken('no pack header');
  const version = pack.readUInt32BE(4);
  if (version !== 2 && version !== 3) throw broken(`pack version ${version}`);
  const count = pack.readUInt32BE(8);
  const body = pack.length - 20;
  const checksum = pack.subarray(body).toString('hex');
  if (createHash('sha1').update(pack.subarray(0, body)).digest('hex') !== checksum)
    throw broken('the pack does not match its checksum');

  const entries: Entry[] = [];
  const byOffset = new Map<number, Entry>();
  const byOid = new Map<string, Entry>();
  const objects = new Resolver(pack, byOffset, byOid, limits);
  let at = 12;
  for (let i = 0; i < count; i++) {
    if (at >= body) throw broken(`the pack ends after ${i} of its ${count} objects`);
    const entry = readEntry(pack, at, body, limits);
    entries.push(entry);
    byOffset.set(entry.offset, entry);
    let compressed: number;
    if (entry.type !== undefined && entry.size > STREAM_ABOVE) {
      const streamed = await hashInflating(pack, entry, body);
      objects.named(entry, streamed.oid);
      compressed = streamed.compressed;
    } else {
      const inflated = inflateAt(pack, entry.data, body, entry.size, entry.offset);
      if (entry.type !== undefined) objects.name(entry, inflated.content);
      compressed = inflated.compressed;
    }
    entry.crc = crc32(pack.subarray(entry.offset, entry.data + compressed));
    at = entry.data + compressed;
  }
  if (at !== body) throw broken(`${body - at} bytes follow the pack's last object`);
  resolveDeltas(entries, objects);
  return { checksum, idx: writeIndex(entries, pack.subarray(body)), objects: count };
}

/**
 * Names every delta, in pack order: an ofs-delta's base comes before it. A ref-delta may name an
 * object named only later: it waits for that one, and is taken up again once it is named (each
 * delta is taken up at most twice, whatever order a hostile pack puts them in).
 */
function resolveDeltas(entries: readonly Entry[], objects: Resolver): void {
  const pending = entries.filter((e) => e.oid === undefined).reverse();
  const waiting = new Map<string, Entry[]>();
  for (let entry = pending.pop(); entry !== undefined; entry = pending.pop()) {
    if (entry.oid !== undefined) continue;
    const outcome = objects.resolveAndName(entry);
    if ('missing' in outcome) {
      const list = waiting.get(outcome.missing);
      if (list) list.push(entry);
      else waiting.set(outcome.missing, [entry]);
      continue;
    }
    for (const dependent of waiting.get(outcome.oid) ?? []) pending.push(dependent);
    waiting.delete(outcome.oid);
  }
  const [missing, [first] = []] = [...waiting][0] ?? [];
  if (missing !== undefined)
    throw broken(`the base ${missing} of the delta at offset ${first?.offset} is not in the pack`);
}

/** The entry at `offset`, from its header (its CRC-32 is the caller's to fill in). */
function readEntry(pack: Buffer, offset: number, body: number, limits: IndexLimits): Entry {
  const header = entryHeader(pack.subarray(offset, Math.min(offset + 32, body)));
  if (!header) throw broken(`a malformed object header at offset ${offset}`);
  const type = TYPES[header.type];
  let data = offset + header.at;
  let base: number | string | undefined;
  if (header.type === OFS_DELTA) {
    const found = baseOffset(pack.subarray(data, Math.min(data + 10, body)), offset);
    if (!found) throw broken(`a malformed delta base at offset ${offset}`);
    base = found.offset;
    data += found.at;
  } else if (header.type === REF_DELTA) {
    const found = baseOid(pack.subarray(data, Math.min(data + 20, body)));
    if (!found) throw broken(`a malformed delta base at offset ${offset}`);
    base = found.oid;
    data += found.at;
  } else if (type === undefined) {
    throw broken(`an object of unknown type ${header.type} at offset ${offset}`);
  }
  if (header.size > limits.maxObjectBytes) throw tooLarge(offset, header.size, limits);
  return { offset, data, size: header.size, type, ...(base !== undefined && { base }), crc: 0 };
}

/** A whole object's id, hashed as it inflates, and how many bytes of the pack its stream took. */
async function hashInflating(
  pack: Buffer,
  entry: Entry,
  body: number,
): Promise<{ oid: string; compressed: number }> {
  const hash = createHash('sha1').update(`${entry.type} ${entry.size}\0`);
  const inflate = createInflate();
  let produced = 0;
  inflate.on('data', (chunk: Buffer) => {
    produced += chunk.length;
    if (produced <= entry.size) hash.update(chunk);
    else
      inflate.destroy(
        broken(`the object at offset ${entry.offset} inflates to more than ${entry.size} bytes`),
      );
  });
  try {
    inflate.end(pack.subarray(entry.data, body));
    await finished(inflate);
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    throw broken(`the object at offset ${entry.offset} does not inflate (${(error as Error).message})`);
  }
  if (produced !== entry.size)
    throw broken(`the object at offset ${entry.offset} inflates to ${produced} bytes, not ${entry.size}`);
  return { oid: hash.digest('hex'), compressed: inflate.bytesWritten };
}

/** Resolves objects by offset, keeping inflated bases within a budget (oldest dropped first). */
class Resolver {
  readonly #pack: Buffer;
  readonly #byOffset: Map<number, Entry>;
  readonly #byOid: Map<string, Entry>;
  readonly #limits: IndexLimits;
  readonly #kept = new Map<number, { type: ObjectType; content: Buffer }>();
  #keptBytes = 0;

  constructor(pack: Buffer, byOffset: Map<number, Entry>, byOid: Map<string, Entry>, limits: IndexLimits) {
    this.#pack = pack;
    this.#byOffset = byOffset;
    this.#byOid = byOid;
    this.#limits = limits;
  }

  /** A whole (not delta) object's content. */
  whole(entry: Entry): Buffer {
    return inflateAt(this.#pack, entry.data, this.#pack.length - 20, entry.size, entry.offset).content;
  }

  name(entry: Entry, content: Buffer, type = entry.type): string {
    const oid = createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
    this.named(entry, oid);
    return oid;
  }

  named(entry: Entry, oid: string): void {
    entry.oid = oid;
    if (!this.#byOid.has(oid)) this.#byOid.set(oid, entry);
  }

  /** Names a delta entry; else says which base it waits for (not named yet, or not there). */
  resolveAndName(entry: Entry): { oid: string } | { missing: string } {
    const resolved = this.#resolve(entry);
    if ('missing' in resolved) return resolved;
    return { oid: this.name(entry, resolved.content, resolved.type) };
  }

  #resolve(entry: Entry): { type: ObjectType; content: Buffer } | { missing: string } {
    // The chain down to an object kept or whole, then each delta applied on the way back up.
    const chain: Entry[] = [];
    let at: Entry = entry;
    let resolved: { type: ObjectType; content: Buffer };
    for (;;) {
      const kept = this.#kept.get(at.offset);
      if (kept) {
        resolved = kept;
        break;
      }
      if (at.type !== undefined) {
        resolved = { type: at.type, content: this.whole(at) };
        this.#keep(at.offset, resolved);
        break;
      }
      chain.push(at);
      if (chain.length > MAX_DELTA_DEPTH)
        throw broken(`the delta chain at offset ${entry.offset} is deeper than ${MAX_DELTA_DEPTH}`);
      const base = at.base;
      const next = typeof base === 'number' ? this.#byOffset.get(base) : this.#byOid.get(String(base));
      if (next === undefined) {
        if (typeof base === 'string') return { missing: base };
        throw broken(
          `the delta at offset ${at.offset} names a base at offset ${base}, where no object starts`,
        );
      }
      at = next;
    }
    for (const delta of chain.reverse()) {
      const instructions = this.whole(delta);
      const sizes = deltaSizes(instructions);
      if (sizes && sizes.result > this.#limits.maxObjectBytes)
        throw tooLarge(delta.offset, sizes.result, this.#limits);
      const content = applyDelta(resolved.content, instructions);
      if (!content) throw broken(`the delta at offset ${delta.offset} does not fit its base`);
      resolved = { type: resolved.type, content };
      this.#keep(delta.offset, resolved);
    }
    return resolved;
  }

  #keep(offset: number, object: { type: ObjectType; content: Buffer }): void {
    if (object.content.length > this.#limits.baseCacheBytes / 4) return;
    this.#kept.set(offset, object);
    this.#keptBytes += object.content.length;
    for (const [oldest, kept] of this.#kept) {
      if (this.#keptBytes <= this.#limits.baseCacheBytes) break;
      this.#kept.delete(oldest);
      this.#keptBytes -= kept.content.length;
    }
  }
}

/**
 * The zlib stream at `data`, inflated: exactly `size` bytes, or the pack is broken. Its output
 * buffer is sized to the object, and how much of the pack the stream took is zlib's count.
 */
function inflateAt(
  pack: Buffer,
  data: number,
  body: number,
  size: number,
  offset: number,
): { content: Buffer; compressed: number } {
  let result: { buffer: Buffer; engine: { bytesWritten: number } };
  try {
    result = inflateSync(pack.subarray(data, body), {
      info: true,
      maxOutputLength: Math.max(size, 1),
      // Sized to the object, so nothing larger is kept alive; in 1 MiB steps above STREAM_ABOVE,
      // so a size the header only claims costs nothing before the data is there.
      chunkSize: size < STREAM_ABOVE ? Math.max(size + 1, 64) : 1024 * 1024,
    }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
  } catch (error) {
    throw broken(`the object at offset ${offset} does not inflate (${(error as Error).message})`);
  }
  if (result.buffer.length !== size)
    throw broken(`the object at offset ${offset} inflates to ${result.buffer.length} bytes, not ${size}`);
  return { content: result.buffer, compressed: result.engine.bytesWritten };
}

/** A version 2 index (gitformat-pack(5)) of `entries`, each named, for the pack ending in `checksum`. */
function writeIndex(entries: readonly Entry[], checksum: Buffer): Buffer {
  const sorted = entries
    .map((e) => ({ oid: Buffer.from(e.oid ?? '', 'hex'), crc: e.crc, offset: e.offset }))
    .sort((a, b) => a.oid.compare(b.oid));
  const n = sorted.length;
  const large = sorted.filter((e) => e.offset >= 0x80000000);
  const idx = Buffer.alloc(8 + 1024 + n * 28 + large.length * 8 + 40);
  idx.writeUInt32BE(0xff744f63, 0);
  idx.writeUInt32BE(2, 4);
  const fanout = new Uint32Array(256);
  for (const e of sorted) fanout[e.oid[0] ?? 0] = (fanout[e.oid[0] ?? 0] ?? 0) + 1;
  let total = 0;
  for (let i = 0; i < 256; i++) {
    total += fanout[i] ?? 0;
    idx.writeUInt32BE(total, 8 + i * 4);
  }
  const oids = 8 + 1024;
  const crcs = oids + n * 20;
  const offsets = crcs + n * 4;
  const largeOffsets = offsets + n * 4;
  let nextLarge = 0;
  sorted.forEach((e, i) => {
    e.oid.copy(idx, oids + i * 20);
    idx.writeUInt32BE(e.crc, crcs + i * 4);
    if (e.offset < 0x80000000) idx.writeUInt32BE(e.offset, offsets + i * 4);
    else {
      idx.writeUInt32BE((0x80000000 | nextLarge) >>> 0, offsets + i * 4);
      idx.writeBigUInt64BE(BigInt(e.offset), largeOffsets + nextLarge * 8);
      nextLarge++;
    }
  });
  const trailer = largeOffsets + large.length * 8;
  checksum.copy(idx, trailer);
  createHash('sha1')
    .update(idx.subarray(0, trailer + 20))
    .digest()
    .copy(idx, trailer + 20);
  return idx;
}

function broken(detail: string): ProtocolError {
  return new ProtocolError(`the fetched pack is malformed: ${detail}`);
}

function tooLarge(offset: number, size: number, limits: IndexLimits): ProtocolError {
  return new ProtocolError(
    `the fetched pack holds an object of ${size} bytes (at offset ${offset}); Janus reads objects of at most ${limits.maxObjectBytes} bytes`,
  );
}

/**
 * Indexing a pack a fetch received (gitformat-pack(5)), as `git index-pack` does: every entry's
 * object id, CRC-32 and offset, written as a version 2 `.idx` (the same bytes git writes).
 *
 * isomorphic-git's fetch indexes with the whole response held twice (its chunks and their
 * concatenation), up to 32 MiB of inflated objects kept, and each object hashed through
 * WebCrypto (a thread-pool round trip per object): a 13 MB pack of 400 directories raised a
 * poll's peak by ~45 MiB and spent half of its ~0.7 s waiting. Here the pack is read once from
 * disk and objects are hashed in this thread, each built once (deltas applied from their base
 * down, depth first), with the event loop given back every few milliseconds.
 *
 * The pack comes from a server tenants push to, so what it may cost is bounded before it is
 * spent (IndexLimits): a pack of 17 KB (an 8 MiB base and 400 small deltas on it) took 4.9 s of
 * one synchronous stretch when each delta rebuilt its base, and a chain of 100 deltas of 3 MiB
 * 11.7 s; now 0.24 s and 0.73 s, in slices of at most ~50 ms.
 */
import { createHash } from 'node:crypto';
import { finished } from 'node:stream/promises';
import { crc32, createInflate, inflateSync } from 'node:zlib';
import { applyDelta, deltaInstructions, deltaSizes } from './delta.ts';
import { COMMIT_HEADER_BYTES, LinkCollector, type ObjectLinks } from './pack-links.ts';
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

export type { ObjectLinks } from './pack-links.ts';

export interface IndexedPack {
  /** The pack's own checksum (hex): its name is pack-<checksum>.pack. */
  checksum: string;
  /** The version 2 index. */
  idx: Buffer;
  objects: number;
  /** Every object the pack holds. */
  oids: ReadonlySet<string>;
  /** What its trees and commits name: checked against the pack and the store before use. */
  links: ObjectLinks;
}

export interface IndexLimits {
  /** Objects in one pack: indexing keeps ~180 bytes of bookkeeping for each until it is done. */
  maxObjects: number;
  /** The largest object inflated (bytes); a larger one fails the fetch. */
  maxObjectBytes: number;
  /** The largest delta, delta base or delta result, each resolved in memory (bytes). */
  maxDeltaBytes: number;
  /** Bases held at once while their deltas are applied (bytes): one chain's branch points. */
  maxHeldBytes: number;
  /** All the pack's objects and deltas inflated and applied, together (bytes): its CPU. */
  maxInflatedBytes: number;
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
/** Indexing gives the event loop back this often (ms): the controller shares the thread. */
const SLICE_MS = 10;
/**
 * What one delta instruction counts against maxInflatedBytes: applying one costs 35-65 ns
 * whatever it copies (measured on the test machine), the time of hashing a few hundred bytes.
 * A delta from git takes a few dozen instructions per change.
 */
const INSTRUCTION_COST = 256;
/** What one tree entry or commit header read for the links counts: 1.6-2.5 µs each, measured. */
const LINK_COST = 1024;
/** A delta holds at most an instruction per 4 bytes of its result (git copies 16 or more). */
const BYTES_PER_INSTRUCTION = 4;

/** Indexes `pack`, a whole pack file; throws ProtocolError for anything malformed or too costly. */
export async function indexPack(pack: Buffer, limits: IndexLimits): Promise<IndexedPack> {
  if (pack.length < 32 || pack.toString('latin1', 0, 4) !== 'PACK') throw broken('no pack header');
  const version = pack.readUInt32BE(4);
  if (version !== 2 && version !== 3) throw broken(`pack version ${version}`);
  const count = pack.readUInt32BE(8);
  if (count > limits.maxObjects)
    throw new ProtocolError(
      `the fetched pack holds ${count} objects; Janus indexes packs of at most ${limits.maxObjects}`,
    );
  const body = pack.length - 20;
  const checksum = pack.subarray(body).toString('hex');
  if (createHash('sha1').update(pack.subarray(0, body)).digest('hex') !== checksum)
    throw broken('the pack does not match its checksum');

  const work = new Work(limits);
  const links = new LinkCollector(limits.maxObjects);
  const entries: Entry[] = [];
  let at = 12;
  for (let i = 0; i < count; i++) {
    if (at >= body) throw broken(`the pack ends after ${i} of its ${count} objects`);
    const entry = readEntry(pack, at, body, limits);
    entries.push(entry);
    const compressed = await firstPass(pack, entry, work, links);
    entry.crc = crc32(pack.subarray(entry.offset, entry.data + compressed));
    at = entry.data + compressed;
    await work.slice();
  }
  if (at !== body) throw broken(`${body - at} bytes follow the pack's last object`);
  await resolveDeltas(pack, entries, work, links);
  return {
    checksum,
    idx: writeIndex(entries, pack.subarray(body)),
    objects: count,
    oids: new Set(entries.map((e) => e.oid ?? '')),
    links: links.links,
  };
}

/**
 * An entry's first reading: a whole object is named (and what it names collected), a delta
 * measured and its cost counted before it is applied. Returns the bytes of the pack its zlib
 * stream takes.
 */
async function firstPass(pack: Buffer, entry: Entry, work: Work, links: LinkCollector): Promise<number> {
  const body = pack.length - 20;
  const { type } = entry;
  if (type !== undefined && entry.size > STREAM_ABOVE) {
    work.spend(entry.size, entry);
    // Hashed as it inflates, never held: a commit this large is looked into by its start only.
    const streamed = await hashInflating(pack, entry, body);
    entry.oid = streamed.oid;
    work.spend(links.add(type, streamed.oid, streamed.start) * LINK_COST, entry);
    return streamed.compressed;
  }
  const { content, compressed } = inflateAt(pack, entry.data, body, entry.size, entry.offset);
  if (type !== undefined) {
    work.spend(entry.size, entry);
    entry.oid = objectId(type, content);
    work.spend(links.add(type, entry.oid, content) * LINK_COST, entry);
    return compressed;
  }
  // Inflated now and again when applied, and its result built: counted before any of it.
  const { limits } = work;
  const result = deltaSizes(content)?.result ?? 0;
  if (result > limits.maxDeltaBytes) throw tooLargeDelta(entry.offset, 'result', result, limits);
  const steps = deltaInstructions(content) ?? 0;
  if (steps > result / BYTES_PER_INSTRUCTION + 1024)
    throw broken(
      `the delta at offset ${entry.offset} holds ${steps} instructions for a result of ${result} bytes`,
    );
  work.spend(2 * entry.size + result + steps * INSTRUCTION_COST, entry);
  return compressed;
}

/** What indexing has cost so far, against the limits; and when to give the event loop back. */
class Work {
  readonly limits: IndexLimits;
  #inflated = 0;
  #sliceStart = performance.now();

  constructor(limits: IndexLimits) {
    this.limits = limits;
  }

  spend(bytes: number, entry: Entry): void {
    this.#inflated += bytes;
    if (this.#inflated > this.limits.maxInflatedBytes)
      throw new ProtocolError(
        `the fetched pack inflates to more than ${this.limits.maxInflatedBytes} bytes (at offset ${entry.offset}); Janus indexes packs of at most that`,
      );
  }

  async slice(): Promise<void> {
    if (performance.now() - this.#sliceStart < SLICE_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.#sliceStart = performance.now();
  }
}

/** A base whose deltas are being applied: held until its last one is. */
interface Frame {
  type: ObjectType;
  content: Buffer;
  deltas: Entry[];
  next: number;
  depth: number;
}

/**
 * Names every delta as `git index-pack` does: from each whole object down through the deltas on
 * it, depth first, so each object is built once, whatever order or fan-out a hostile pack has.
 */
async function resolveDeltas(
  pack: Buffer,
  entries: readonly Entry[],
  work: Work,
  links: LinkCollector,
): Promise<void> {
  const deltas = new DeltasOn(entries);
  for (const root of entries) {
    if (root.type === undefined) continue;
    const onRoot = deltas.take(root);
    if (onRoot.length > 0) await resolveTree(root, root.type, onRoot, { pack, deltas, work, links });
  }
  const unresolved = entries.find((e) => e.oid === undefined);
  if (unresolved === undefined) return;
  // Its chain ends in a ref-delta whose base is not here (or in a cycle of ref-deltas).
  const byOffset = new Map(entries.map((e) => [e.offset, e]));
  let at: Entry = unresolved;
  for (let hops = 0; typeof at.base === 'number' && hops < entries.length; hops++)
    at = byOffset.get(at.base) ?? at;
  throw broken(`the base ${String(at.base)} of the delta at offset ${at.offset} is not in the pack`);
}

/** The deltas on each base, by its offset or id; each taken once, when its base is named. */
class DeltasOn {
  readonly #on = new Map<number | string, Entry[]>();

  constructor(entries: readonly Entry[]) {
    const starts = new Set(entries.map((e) => e.offset));
    for (const entry of entries) {
      if (entry.base === undefined) continue;
      if (typeof entry.base === 'number' && !starts.has(entry.base))
        throw broken(
          `the delta at offset ${entry.offset} names a base at offset ${entry.base}, where no object starts`,
        );
      const list = this.#on.get(entry.base);
      if (list) list.push(entry);
      else this.#on.set(entry.base, [entry]);
    }
  }

  take(base: Entry): Entry[] {
    const found = [...(this.#on.get(base.offset) ?? []), ...(this.#on.get(base.oid ?? '') ?? [])];
    this.#on.delete(base.offset);
    this.#on.delete(base.oid ?? '');
    return found;
  }
}

/**
 * Applies the deltas on `root`, and those on them, depth first. A base is held only until its
 * last delta is applied: a chain holds two objects at a time, a tree its branch points.
 */
async function resolveTree(
  root: Entry,
  type: ObjectType,
  onRoot: Entry[],
  { pack, deltas, work, links }: { pack: Buffer; deltas: DeltasOn; work: Work; links: LinkCollector },
): Promise<void> {
  const { limits } = work;
  const body = pack.length - 20;
  if (root.size > limits.maxDeltaBytes)
    throw tooLargeDelta(onRoot[0]?.offset ?? root.offset, 'base', root.size, limits);
  work.spend(root.size, root);
  const content = inflateAt(pack, root.data, body, root.size, root.offset).content;
  const stack: Frame[] = [{ type, content, deltas: onRoot, next: 0, depth: 0 }];
  let held = content.length;
  for (let frame = stack.at(-1); frame !== undefined; frame = stack.at(-1)) {
    const delta = frame.deltas[frame.next++] as Entry; // a frame is popped after its last delta
    const instructions = inflateAt(pack, delta.data, body, delta.size, delta.offset).content;
    const result = applyDelta(frame.content, instructions);
    if (!result) throw broken(`the delta at offset ${delta.offset} does not fit its base`);
    delta.oid = objectId(frame.type, result);
    work.spend(links.add(frame.type, delta.oid, result) * LINK_COST, delta);
    if (frame.next === frame.deltas.length) {
      stack.pop();
      held -= frame.content.length;
    }
    const next = deltas.take(delta);
    if (next.length > 0) {
      if (frame.depth + 1 > MAX_DELTA_DEPTH)
        throw broken(`the delta chain at offset ${delta.offset} is deeper than ${MAX_DELTA_DEPTH}`);
      stack.push({ type: frame.type, content: result, deltas: next, next: 0, depth: frame.depth + 1 });
      held += result.length;
      if (held > limits.maxHeldBytes)
        throw new ProtocolError(
          `resolving the fetched pack's deltas would hold more than ${limits.maxHeldBytes} bytes of bases (at offset ${delta.offset}); Janus holds at most that`,
        );
    }
    await work.slice();
  }
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
  if (base !== undefined && header.size > limits.maxDeltaBytes)
    throw tooLargeDelta(offset, 'delta', header.size, limits);
  return { offset, data, size: header.size, type, ...(base !== undefined && { base }), crc: 0 };
}

/**
 * A whole object's id, hashed as it inflates, how many bytes of the pack its stream took, and its
 * first COMMIT_HEADER_BYTES (where a commit's headers are).
 */
async function hashInflating(
  pack: Buffer,
  entry: Entry,
  body: number,
): Promise<{ oid: string; compressed: number; start: Buffer }> {
  const hash = createHash('sha1').update(`${entry.type} ${entry.size}\0`);
  const inflate = createInflate();
  let produced = 0;
  const start: Buffer[] = [];
  inflate.on('data', (chunk: Buffer) => {
    if (produced < COMMIT_HEADER_BYTES) start.push(chunk.subarray(0, COMMIT_HEADER_BYTES - produced));
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
  return { oid: hash.digest('hex'), compressed: inflate.bytesWritten, start: Buffer.concat(start) };
}

function objectId(type: ObjectType, content: Buffer): string {
  return createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
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

function tooLargeDelta(
  offset: number,
  what: 'delta' | 'base' | 'result',
  size: number,
  limits: IndexLimits,
): ProtocolError {
  const named = { delta: 'a delta of', base: 'a delta on a base of', result: 'a delta whose result is' }[
    what
  ];
  return new ProtocolError(
    `the fetched pack holds ${named} ${size} bytes (at offset ${offset}); Janus resolves deltas of at most ${limits.maxDeltaBytes} bytes`,
  );
}

function tooLarge(offset: number, size: number, limits: IndexLimits): ProtocolError {
  return new ProtocolError(
    `the fetched pack holds an object of ${size} bytes (at offset ${offset}); Janus reads objects of at most ${limits.maxObjectBytes} bytes`,
  );
}

/** Reading a version 2 pack `.idx` (gitformat-pack(5)): fan-out table, sorted oids, offsets. */

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

/**
 * Git's delta format (gitformat-pack(5), "Deltified representation"): the base's size and the
 * result's, then instructions that copy a range of the base or insert literal bytes.
 */

/** The sizes a delta starts with, and where its instructions begin; undefined when cut short. */
export function deltaSizes(delta: Uint8Array): { base: number; result: number; at: number } | undefined {
  const base = varint(delta, 0);
  const result = base && varint(delta, base.at);
  return base && result ? { base: base.value, result: result.value, at: result.at } : undefined;
}

/**
 * How many instructions `delta` holds, read without building anything; undefined when it is
 * malformed. Applying one costs time whatever it copies: a delta of millions of one-byte copies
 * is a few KB, and seconds to apply.
 */
export function deltaInstructions(delta: Uint8Array): number | undefined {
  const sizes = deltaSizes(delta);
  if (!sizes) return undefined;
  let count = 0;
  for (let at = sizes.at; at < delta.length; count++) {
    const op = delta[at++] ?? 0;
    if (op & 0x80) {
      for (let bit = 0; bit < 7; bit++) if (op & (1 << bit)) at++;
    } else if (op > 0) at += op;
    else return undefined;
  }
  return count;
}

/** The object `delta` makes of `base`; undefined when the delta does not fit the base or is malformed. */
export function applyDelta(base: Uint8Array, delta: Uint8Array): Buffer | undefined {
  const sizes = deltaSizes(delta);
  if (!sizes || sizes.base !== base.length) return undefined;
  const out = Buffer.allocUnsafe(sizes.result);
  let written = 0;
  let at = sizes.at;
  while (at < delta.length) {
    const op = delta[at++] ?? 0;
    let from: Uint8Array;
    let start: number;
    let size: number;
    if (op & 0x80) {
      const copy = copyRange(delta, at, op);
      if (copy.offset + copy.size > base.length) return undefined;
      [from, start, size, at] = [base, copy.offset, copy.size, copy.at];
    } else if (op > 0) {
      if (at + op > delta.length) return undefined;
      [from, start, size] = [delta, at, op]; // insert the next `op` bytes of the delta
      at += op;
    } else return undefined; // op 0 is reserved
    if (written + size > out.length) return undefined;
    // Short pieces byte by byte: a view and a copy call each cost more than the bytes (a crafted
    // delta is millions of one-byte copies).
    if (size <= 32) for (let i = 0; i < size; i++) out[written + i] = from[start + i] ?? 0;
    else out.set(from.subarray(start, start + size), written);
    written += size;
  }
  return written === out.length ? out : undefined;
}

/** A copy instruction's offset and size: the op's low 7 bits say which of their bytes follow. */
function copyRange(
  delta: Uint8Array,
  start: number,
  op: number,
): { offset: number; size: number; at: number } {
  let at = start;
  let offset = 0;
  let size = 0;
  for (let i = 0; i < 4; i++) if (op & (1 << i)) offset += (delta[at++] ?? 0) * 2 ** (8 * i);
  for (let i = 0; i < 3; i++) if (op & (16 << i)) size += (delta[at++] ?? 0) * 2 ** (8 * i);
  return { offset, size: size === 0 ? 0x10000 : size, at };
}

function varint(bytes: Uint8Array, start: number): { value: number; at: number } | undefined {
  let value = 0;
  let at = start;
  for (let shift = 0; ; shift += 7) {
    const byte = bytes[at++];
    if (byte === undefined || shift > 49) return undefined;
    value += (byte & 0x7f) * 2 ** shift;
    if (!(byte & 0x80)) return { value, at };
  }
}

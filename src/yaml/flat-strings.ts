/**
 * The yaml library builds a quoted or folded scalar one character at a time (`str += ch`), and V8
 * keeps such a string as a rope of one 32-byte node per concatenation until something reads it
 * whole: a 1 MiB double-quoted value then holds 32 MiB of heap for as long as the parsed
 * Transaction is kept (measured: 16 directories of one 1 MiB ConfigMap value held 512 MB).
 * Converting a string to a number makes V8 flatten it in place, to its 1 MiB.
 */

/** Flattens every string in `value` (a plain value, as toJS makes it); returns `value`. */
export function flattenStrings<T>(value: T): T {
  flatten(value, new Set());
  return value;
}

function flatten(value: unknown, seen: Set<object>): void {
  if (typeof value === 'string') {
    // Number() reads the whole string: V8 flattens a rope before it does. The result is unused.
    Number(value);
    return;
  }
  if (typeof value !== 'object' || value === null || seen.has(value)) return;
  seen.add(value);
  if (Array.isArray(value)) {
    for (const item of value) flatten(item, seen);
    return;
  }
  for (const [key, item] of Object.entries(value)) {
    Number(key);
    flatten(item, seen);
  }
}

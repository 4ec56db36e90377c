/**
 * A Git tree object's entries, parsed as isomorphic-git's readTree returns them (same modes,
 * types and order, same names refused), for trees read straight from a pack (packed-object.ts).
 * Anything isomorphic-git would refuse or that is malformed answers undefined: the caller then
 * reads the tree through isomorphic-git, which throws its own error.
 */
import type { TreeEntry } from 'isomorphic-git';
import { compareCodeUnits } from '../text/order.ts';

const TYPE_OF_MODE: Readonly<Record<string, TreeEntry['type']>> = {
  '040000': 'tree',
  '100644': 'blob',
  '100755': 'blob',
  '120000': 'blob',
  '160000': 'commit',
};

/** `mode name\0<20-byte oid>` repeated; entries sorted by name in code point order. */
export function parseTree(content: Buffer): TreeEntry[] | undefined {
  const entries: TreeEntry[] = [];
  let cursor = 0;
  while (cursor < content.length) {
    const space = content.indexOf(32, cursor);
    const nul = content.indexOf(0, cursor);
    if (space < 0 || nul < 0 || nul < space || nul + 21 > content.length) return undefined;
    let mode = content.toString('latin1', cursor, space);
    if (mode === '40000') mode = '040000';
    const type = TYPE_OF_MODE[mode];
    const path = content.toString('utf8', space + 1, nul);
    if (!type || unsafeName(path)) return undefined;
    entries.push({ mode, path, oid: content.toString('hex', nul + 1, nul + 21), type });
    cursor = nul + 21;
  }
  return entries.sort((a, b) => compareCodePoints(a.path, b.path));
}

/**
 * The names isomorphic-git (like git's verify_path) refuses in a tree: path separators, `.`,
 * `..`, `.git` however NTFS or HFS+ would spell it.
 */
export function unsafeName(path: string): boolean {
  const hfsClean = path.replace(/[\u200C-\u200F\u202A-\u202E\u206A-\u206F\uFEFF]/g, '');
  const normalized = (hfsClean.split(':')[0] ?? '').toLowerCase().replace(/[. ]+$/, '');
  return (
    path.includes('\\') ||
    path.includes('/') ||
    hfsClean === '.' ||
    hfsClean === '..' ||
    normalized === '.git' ||
    /^\.?git~[1-9]$/.test(normalized)
  );
}

/** Code point order (Git's, the order of the UTF-8 bytes); `<` compares UTF-16 code units. */
export function compareCodePoints(a: string, b: string): number {
  if (!SURROGATE.test(a) && !SURROGATE.test(b)) return compareCodeUnits(a, b);
  const x = [...a].map((c) => c.codePointAt(0) ?? 0);
  const y = [...b].map((c) => c.codePointAt(0) ?? 0);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return (x[i] ?? 0) < (y[i] ?? 0) ? -1 : 1;
  }
  return x.length - y.length;
}

const SURROGATE = /[\uD800-\uDFFF]/;

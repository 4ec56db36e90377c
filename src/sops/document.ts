/**
 * A sops-encrypted YAML or JSON document (JSON is read as YAML): its `sops:` metadata and the
 * values beside it, walked in the order they are written, as sops walks them for its MAC.
 */
import { type Document, isAlias, isMap, isPair, isScalar, isSeq } from 'yaml';
import { parseYamlNodes } from '../yaml/yaml-file.ts';
import { readMetadata, type SopsMetadata } from './metadata.ts';
import { SopsError } from './sops-error.ts';

export interface SopsDocument {
  file: string;
  metadata: SopsMetadata;
  doc: Document.Parsed;
  /** The top-level key/value pairs, without `sops`. */
  pairs: { key: string; value: unknown }[];
}

/** A leaf: its key path (sequence items add none, as in sops) and its scalar value. */
export type LeafVisitor = (path: readonly string[], value: unknown) => unknown;

export function readSopsDocument(file: string, text: string): SopsDocument {
  const docs = parseYamlNodes(text);
  if (typeof docs === 'string') throw new SopsError(file, docs);
  const nonEmpty = docs.filter((d) => d.contents !== null);
  if (nonEmpty.length !== 1) {
    throw new SopsError(
      file,
      `holds ${nonEmpty.length} YAML documents: a sops-encrypted change file holds exactly one`,
    );
  }
  const doc = nonEmpty[0] as Document.Parsed;
  const root = doc.contents;
  if (!isMap(root)) throw new SopsError(file, 'is not a mapping');
  let metadata: SopsMetadata | undefined;
  const pairs: SopsDocument['pairs'] = [];
  for (const pair of root.items) {
    const key = keyOf(file, pair.key);
    if (key === 'sops') metadata = readMetadata(file, plain(file, pair.value));
    else pairs.push({ key, value: pair.value });
  }
  if (!metadata) throw new SopsError(file, 'has no sops metadata block: it is not encrypted with sops');
  return { file, metadata, doc, pairs };
}

/**
 * Walks every value in document order, calling `leaf` for each non-null scalar; returns the plain
 * value built from what `leaf` returns. Nulls are neither visited nor hashed (as in sops).
 */
export function walkValues(d: SopsDocument, leaf: LeafVisitor): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of d.pairs) setOwn(out, key, walk(d, value, [key], leaf));
  return out;
}

/** The file a walk is in (for errors). */
type Where = Pick<SopsDocument, 'file'>;

function walk(d: Where, node: unknown, path: string[], leaf: LeafVisitor): unknown {
  // sops writes no anchors nor aliases (it encrypts each value where it is). Resolving an alias
  // walks the whole document, once per alias: a pushed 80 KB file of them held the event loop for
  // 19 s, before any key or policy was looked at. So an alias is refused.
  if (isAlias(node))
    throw new SopsError(d.file, 'holds a YAML alias (*name), which sops never writes: refused', path);
  if (isMap(node)) {
    const out: Record<string, unknown> = {};
    for (const pair of node.items) {
      if (!isPair(pair)) continue;
      const key = keyOf(d.file, pair.key);
      setOwn(out, key, walk(d, pair.value, [...path, key], leaf));
    }
    return out;
  }
  if (isSeq(node)) return node.items.map((item) => walk(d, item, path, leaf));
  if (isScalar(node)) {
    if (node.value === null || node.value === undefined) return null;
    return leaf(path, node.value);
  }
  if (node === null || node === undefined) return null;
  throw new SopsError(d.file, 'holds a YAML node Janus cannot read', path);
}

function keyOf(file: string, key: unknown): string {
  if (isScalar(key)) {
    if (typeof key.value === 'string') return key.value;
    // A key written as a number or boolean: sops reads its text.
    if (key.source !== undefined) return key.source;
    if (key.value !== null && key.value !== undefined) return String(key.value);
  }
  throw new SopsError(file, 'has a key that is not a string: sops supports only string keys');
}

/** A node as a plain value (the metadata block: small, and read as it is). */
function plain(file: string, node: unknown): unknown {
  return walk({ file }, node, [], (_path, value) => value);
}

/** A key of the file as an own property, even `__proto__` (an assignment would set the prototype). */
function setOwn(out: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
}

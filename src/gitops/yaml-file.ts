/**
 * Parses a (multi-document) YAML file the way kubectl users expect, keeping enough position
 * information to point each diagnostic at a line and column.
 */

import type { ScalarTag } from 'yaml';
import { type Document, isMap, isNode, isPair, isScalar, isSeq, LineCounter, parseAllDocuments } from 'yaml';
import type { Diagnostic } from './diagnostic.ts';

export type FieldPath = readonly (string | number)[];

export interface Position {
  line: number;
  column: number;
}

export interface YamlDocument {
  /** 1-based position of the document in its file. */
  index: number;
  value: unknown;
  /** Where a field is: its key (for unknown or misplaced fields) or its value; else its nearest parent. */
  locate(path: FieldPath, at?: 'key' | 'value'): Position | undefined;
}

export interface ParsedYaml {
  /** Non-empty documents that parsed without error. */
  documents: YamlDocument[];
  diagnostics: Diagnostic[];
  /** True when the file holds more than one document (then diagnostics name the document). */
  multiDocument: boolean;
}

/**
 * kubectl reads YAML 1.1, where `0644` is octal (420); YAML 1.2 would read 644, which the API
 * server rejects as a file mode. Only this rule is borrowed from 1.1: `yes`/`on` stay strings.
 */
const yaml11Octal: ScalarTag = {
  tag: 'tag:yaml.org,2002:int',
  default: true,
  test: /^0[0-7]+$/,
  resolve: (source: string) => Number.parseInt(source, 8),
  identify: () => false,
};

/** Bounds alias expansion ("billion laughs"). */
const MAX_ALIAS_COUNT = 100;

export function parseYamlFile(file: string, text: string): ParsedYaml {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, {
    lineCounter,
    prettyErrors: false,
    uniqueKeys: true,
    customTags: (tags) => [yaml11Octal, ...tags],
  });
  const multiDocument = docs.length > 1;
  const documents: YamlDocument[] = [];
  const diagnostics: Diagnostic[] = [];
  docs.forEach((doc, i) => {
    const index = i + 1;
    const where = (offset: number) => {
      const { line, col } = lineCounter.linePos(offset);
      return { line, column: col };
    };
    const docField = multiDocument ? { document: index } : {};
    if (doc.errors.length > 0) {
      for (const error of doc.errors) {
        diagnostics.push({
          code: 'yaml-syntax',
          file,
          ...docField,
          ...where(error.pos[0]),
          message: `YAML syntax error: ${error.message}`,
        });
      }
      return;
    }
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (error) {
      diagnostics.push({
        code: 'yaml-syntax',
        file,
        ...docField,
        message: `YAML error: ${(error as Error).message}`,
      });
      return;
    }
    if (value === null || value === undefined) return; // an empty document (e.g. after a trailing `---`)
    documents.push({
      index,
      value,
      locate: (path, at = 'value') => {
        const offset = offsetOf(doc, path, at);
        return offset === undefined ? undefined : where(offset);
      },
    });
  });
  return { documents, diagnostics, multiDocument };
}

/** Walks the node tree along `path`; stops at the deepest node that exists. */
function offsetOf(doc: Document.Parsed, path: FieldPath, at: 'key' | 'value'): number | undefined {
  let node: unknown = doc.contents;
  let offset = startOf(node);
  for (let i = 0; i < path.length; i++) {
    const step = childOf(node, path[i]);
    if (!step) return offset;
    if (i === path.length - 1 && at === 'key' && step.key !== undefined) return step.key;
    node = step.node;
    // A key with no value (`name:`) has no value node: point at the key.
    offset = startOf(node) ?? step.key ?? offset;
  }
  return offset;
}

/** The child at `segment` of a map or sequence node, with the offset of its key (maps only). */
function childOf(
  node: unknown,
  segment: string | number | undefined,
): { node: unknown; key?: number } | undefined {
  if (isMap(node)) {
    const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === segment);
    if (!pair) return undefined;
    const key = startOf(pair.key);
    return { node: pair.value, ...(key !== undefined && { key }) };
  }
  if (isSeq(node) && typeof segment === 'number' && segment < node.items.length)
    return { node: node.items[segment] };
  return undefined;
}

function startOf(node: unknown): number | undefined {
  return isNode(node) ? node.range?.[0] : undefined;
}

/**
 * Parses a (multi-document) YAML file the way kubectl users expect, keeping enough position
 * information to point each diagnostic at a line and column.
 */

import type { ScalarTag } from 'yaml';
import { Composer, type Document, isMap, isNode, isPair, isScalar, isSeq, LineCounter } from 'yaml';
import type { Diagnostic } from './diagnostic.ts';
import { flattenStrings } from './flat-strings.ts';
import {
  boundedTokens,
  checkNodes,
  ErrorLimit,
  type FileBudget,
  limitComposerErrors,
  YAML_LIMITS,
  YamlLimitError,
} from './yaml-limits.ts';

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

export function parseYamlFile(file: string, text: string): ParsedYaml {
  const lineCounter = new LineCounter();
  const where = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  let docs: Document.Parsed[];
  try {
    docs = composeDocuments(text, lineCounter);
  } catch (error) {
    if (!(error instanceof YamlLimitError)) throw error;
    const diagnostic = { code: error.code, file, ...where(error.offset), message: error.message };
    return { documents: [], diagnostics: [diagnostic], multiDocument: false };
  }
  const multiDocument = docs.length > 1;
  const documents: YamlDocument[] = [];
  const diagnostics: Diagnostic[] = [];
  const budget: FileBudget = { anchors: 0, aliases: 0, expansion: 0, duplicates: 0 };
  docs.forEach((doc, i) => {
    const index = i + 1;
    const docField = multiDocument ? { document: index } : {};
    const problems: Diagnostic[] = doc.errors.map((error) => ({
      code: 'yaml-syntax',
      file,
      ...docField,
      ...where(error.pos[0]),
      message: `YAML syntax error: ${error.message}`,
    }));
    const duplicates: number[] = [];
    try {
      checkNodes(doc, budget, duplicates);
    } catch (error) {
      if (!(error instanceof YamlLimitError)) throw error;
      problems.push({ code: error.code, file, ...docField, ...where(error.offset), message: error.message });
    }
    for (const offset of duplicates) {
      problems.push({
        code: 'yaml-syntax',
        file,
        ...docField,
        ...where(offset),
        message: 'YAML syntax error: Map keys must be unique',
      });
    }
    if (problems.length > 0) {
      for (const problem of problems) diagnostics.push(problem);
      return;
    }
    let value: unknown;
    try {
      // checkNodes bounded what the aliases expand to; the library's own alias count would walk the
      // whole document once per aliased anchor.
      value = flattenStrings(doc.toJS({ maxAliasCount: -1 }));
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
        const nodes = documentNodes(i);
        const offset = nodes && offsetOf(nodes, path, at);
        return offset === undefined ? undefined : where(offset);
      },
    });
  });
  // The documents' node trees are not kept: they are several times the size of the text, and
  // only a diagnostic needs a position. A file that has one is composed again, once (validate of
  // 400 valid directories: a third less garbage collection).
  let composedAgain: Document.Parsed[] | undefined;
  const documentNodes = (i: number) => {
    composedAgain ??= composeDocuments(text, new LineCounter());
    return composedAgain[i];
  };
  return { documents, diagnostics, multiDocument };
}

/**
 * What parseAllDocuments does (lexer, parser, composer), with the CST checked on the way:
 * uniqueKeys is off because the library's check is quadratic (every key against every earlier
 * key of its mapping: minutes for a 1 MiB mapping); checkNodes does it in linear time.
 * YamlLimitError when a limit is broken.
 */
function composeDocuments(text: string, lineCounter: LineCounter): Document.Parsed[] {
  const composer = new Composer({
    prettyErrors: false,
    uniqueKeys: false,
    customTags: (tags) => [yaml11Octal, ...tags],
  });
  const errors = new ErrorLimit(YAML_LIMITS.maxErrors);
  limitComposerErrors(composer, errors);
  return Array.from(composer.compose(boundedTokens(text, lineCounter, errors)));
}

/**
 * The node trees of `text`'s documents, checked against YAML_LIMITS like parseYamlFile's, for a
 * reader that needs what plain values lose: the order of every mapping's keys as written (a
 * JavaScript object puts integer-like keys first). A string saying what is wrong when the text is
 * not valid YAML or breaks a limit.
 */
export function parseYamlNodes(text: string): Document.Parsed[] | string {
  const lineCounter = new LineCounter();
  let docs: Document.Parsed[];
  try {
    docs = composeDocuments(text, lineCounter);
  } catch (error) {
    if (!(error instanceof YamlLimitError)) throw error;
    return `line ${lineCounter.linePos(error.offset).line}: ${error.message}`;
  }
  const budget: FileBudget = { anchors: 0, aliases: 0, expansion: 0, duplicates: 0 };
  for (const doc of docs) {
    const error = doc.errors[0];
    if (error) return `line ${lineCounter.linePos(error.pos[0]).line}: YAML syntax error: ${error.message}`;
    const duplicates: number[] = [];
    try {
      checkNodes(doc, budget, duplicates);
    } catch (e) {
      if (!(e instanceof YamlLimitError)) throw e;
      return `line ${lineCounter.linePos(e.offset).line}: ${e.message}`;
    }
    const duplicate = duplicates[0];
    if (duplicate !== undefined)
      return `line ${lineCounter.linePos(duplicate).line}: map keys must be unique`;
  }
  return docs;
}

/**
 * The first document of `text` as a plain value, read within YAML_LIMITS; undefined when the text
 * is not valid YAML or breaks a limit. For files that only Janus writes (results), where a
 * diagnostic has nowhere to go but a bomb must still not stall the poller.
 */
export function parseYamlValue(text: string): unknown {
  const { documents, diagnostics } = parseYamlFile('', text);
  return diagnostics.length > 0 ? undefined : (documents[0]?.value ?? null);
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

/**
 * Parses a (multi-document) YAML file the way kubectl users expect, keeping enough position
 * information to point each diagnostic at a line and column.
 */

import type { Alias, CST, ParsedNode, Scalar, ScalarTag, YAMLMap, YAMLSeq } from 'yaml';
import {
  Composer,
  type Document,
  isAlias,
  isCollection,
  isMap,
  isNode,
  isPair,
  isScalar,
  isSeq,
  Lexer,
  LineCounter,
  Parser,
} from 'yaml';
import type { Diagnostic, DiagnosticCode } from './diagnostic.ts';

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

/**
 * What one file may cost to read. The yaml library recurses once per nesting level when it builds
 * and converts documents (a 1 MiB file of `[` took ~9 s and ~670 MB before overflowing the
 * stack), and its alias resolution is quadratic in the number of anchors and aliases; an alias
 * can also stand for a large part of the file, many times over ("billion laughs"). Every limit is
 * checked before the library does the expensive part, so a hostile file is refused in
 * milliseconds; each violation is a diagnostic naming the file and the line. docs/git.md lists them.
 */
export const YAML_LIMITS = {
  /** Collections (mappings, sequences) nested in one another, also through aliases. */
  maxDepth: 100,
  /** Anchors (`&name`) in one file. */
  maxAnchors: 1000,
  /** Aliases (`*name`) in one file. */
  maxAliases: 1000,
  /** What the aliases of one file stand for, in bytes of YAML source, nested aliases included. */
  maxAliasExpansionBytes: 1024 * 1024,
  /** YAML errors in one file before reading stops. */
  maxErrors: 100,
} as const;

/** A limit of YAML_LIMITS broken at `offset`: parsing stops and the file is refused. */
class YamlLimitError extends Error {
  readonly code: DiagnosticCode;
  readonly offset: number;
  constructor(code: DiagnosticCode, offset: number, message: string) {
    super(message);
    this.code = code;
    this.offset = offset;
  }
}

export function parseYamlFile(file: string, text: string): ParsedYaml {
  const lineCounter = new LineCounter();
  const where = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  // What parseAllDocuments does (lexer, parser, composer), with the CST checked on the way:
  // uniqueKeys is off because the library's check is quadratic (every key against every earlier
  // key of its mapping: minutes for a 1 MiB mapping); checkNodes does it in linear time.
  const composer = new Composer({
    prettyErrors: false,
    uniqueKeys: false,
    customTags: (tags) => [yaml11Octal, ...tags],
  });
  const errors = new ErrorLimit(YAML_LIMITS.maxErrors);
  limitComposerErrors(composer, errors);
  let docs: Document.Parsed[];
  try {
    docs = Array.from(composer.compose(boundedTokens(text, lineCounter, errors)));
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
      value = doc.toJS({ maxAliasCount: -1 });
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

/**
 * The first document of `text` as a plain value, read within YAML_LIMITS; undefined when the text
 * is not valid YAML or breaks a limit. For files that only Janus writes (results), where a
 * diagnostic has nowhere to go but a bomb must still not stall the poller.
 */
export function parseYamlValue(text: string): unknown {
  const { documents, diagnostics } = parseYamlFile('', text);
  return diagnostics.length > 0 ? undefined : (documents[0]?.value ?? null);
}

/**
 * The CST tokens of `text`, from the library's own lexer and parser, stopped as soon as collections
 * nest deeper than YAML_LIMITS.maxDepth. Both are iterative: the parser keeps the collections
 * being built on an explicit stack, which is exactly the nesting that the composer and toJS will
 * recurse through. Watching it costs nothing, sees what the library sees (quotes, block scalars,
 * comments, flow and block collections alike), and stops a bracket bomb after a hundred tokens.
 */
function* boundedTokens(text: string, lineCounter: LineCounter, errors: ErrorLimit): Generator<CST.Token> {
  const parser = new Parser(lineCounter.addNewLine);
  lineCounter.addNewLine(0); // as Parser.parse does
  for (const lexeme of new Lexer().lex(text)) {
    for (const token of parser.next(lexeme)) {
      // Errors between documents go straight to the composer's error list, not through onError.
      if (token.type === 'error') errors.note(token.offset, token.message);
      yield token;
    }
    // Besides collections, the stack holds the document and the scalar being read.
    if (parser.stack.length > YAML_LIMITS.maxDepth + 1) {
      const innermost = deepCollection(parser.stack, YAML_LIMITS.maxDepth);
      if (innermost) {
        throw new YamlLimitError(
          'yaml-too-complex',
          innermost.offset,
          `collections are nested more than ${YAML_LIMITS.maxDepth} levels deep; the file was not parsed`,
        );
      }
    }
  }
  yield* parser.end();
}

/** The collection nested deeper than `max` on the parser's stack, if there is one. */
function deepCollection(stack: readonly CST.Token[], max: number): CST.Token | undefined {
  let depth = 0;
  for (const token of stack) {
    if (token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection') {
      if (++depth > max) return token;
    }
  }
  return undefined;
}

/**
 * Stops reading after `max` errors. The library creates an Error object (with a stack trace) per
 * problem and has no limit: 1 MiB of `]` is a million errors, ~12 s and 1.5 GB.
 */
class ErrorLimit {
  readonly #max: number;
  #count = 0;
  #first: { offset: number; message: string } | undefined;

  constructor(max: number) {
    this.#max = max;
  }

  note(offset: number, message: string): void {
    this.#first ??= { offset, message };
    if (++this.#count <= this.#max) return;
    throw new YamlLimitError(
      'yaml-syntax',
      this.#first.offset,
      `YAML syntax error: ${this.#first.message} (and more than ${this.#max} errors in all; the file was not read further)`,
    );
  }
}

/**
 * The composer reports the problems it finds inside documents (its own checks, and the parser's
 * error tokens there) through `onError`, a property set in its constructor but not public API; if a
 * future version drops it, those errors are unlimited again, as before (yaml-limits.test.ts would
 * fail).
 */
function limitComposerErrors(composer: Composer, errors: ErrorLimit): void {
  type OnError = (source: unknown, code: string, message: string, warning?: boolean) => void;
  const hook = composer as unknown as { onError?: OnError };
  const report = hook.onError;
  if (typeof report !== 'function') return;
  hook.onError = (source, code, message, warning) => {
    if (!warning) errors.note(errorOffset(source), message);
    report(source, code, message, warning);
  };
}

function errorOffset(source: unknown): number {
  if (typeof source === 'number') return source;
  if (Array.isArray(source)) return Number(source[0] ?? 0);
  return Number((source as { offset?: unknown } | null)?.offset ?? 0);
}

/** What the documents of one file used so far. */
interface FileBudget {
  anchors: number;
  aliases: number;
  /** Bytes of YAML source the aliases stand for. */
  expansion: number;
  /** Duplicate keys reported (at most YAML_LIMITS.maxErrors). */
  duplicates: number;
}

interface NodeCost {
  /** Bytes of YAML source the node stands for, aliases expanded. */
  size: number;
  /** Collections nested in it, aliases expanded. */
  depth: number;
}

/**
 * One linear walk over a composed document, before it is converted: counts anchors and aliases,
 * measures what each alias expands to (memoized per anchored node, so a billion laughs costs what
 * its text costs), refuses an alias inside the node it refers to (a cycle, which toJS would
 * turn into a circular object), and collects duplicate keys. Recursion is bounded by the nesting
 * limit boundedTokens enforced.
 */
function checkNodes(doc: Document.Parsed, budget: FileBudget, duplicates: number[]): void {
  new NodeWalk(budget, duplicates).visit(doc.contents, 0);
}

class NodeWalk {
  readonly #budget: FileBudget;
  readonly #duplicates: number[];
  readonly #anchors = new Map<string, ParsedNode>();
  /** Of anchored nodes, once visited. */
  readonly #costs = new Map<ParsedNode, NodeCost>();
  /** Collections being visited: an alias of one of them is a cycle. */
  readonly #open = new Set<ParsedNode>();

  constructor(budget: FileBudget, duplicates: number[]) {
    this.#budget = budget;
    this.#duplicates = duplicates;
  }

  /** `level`: the collections around `node`. */
  visit(node: unknown, level: number): NodeCost {
    if (!isNode(node)) return { size: 1, depth: 0 };
    const parsed = node as ParsedNode;
    if (isAlias(parsed)) return this.#alias(parsed, level);
    if (parsed.anchor) {
      if (++this.#budget.anchors > YAML_LIMITS.maxAnchors)
        throw limit(parsed, `more than ${YAML_LIMITS.maxAnchors} anchors in one file`);
      this.#anchors.set(parsed.anchor, parsed); // an alias refers to the last anchor of its name before it
    }
    const cost = isCollection(parsed)
      ? this.#collection(parsed, level)
      : { size: Math.max(1, parsed.range[1] - parsed.range[0]), depth: 0 };
    if (parsed.anchor) this.#costs.set(parsed, cost);
    return cost;
  }

  #alias(alias: Alias.Parsed, level: number): NodeCost {
    if (++this.#budget.aliases > YAML_LIMITS.maxAliases)
      throw limit(alias, `more than ${YAML_LIMITS.maxAliases} aliases in one file`);
    const target = this.#anchors.get(alias.source);
    if (target === undefined) return { size: 1, depth: 0 }; // the composer reported it
    if (this.#open.has(target)) throw limit(alias, `alias *${alias.source} is inside the node it refers to`);
    const cost = this.#costs.get(target) ?? { size: 1, depth: 0 };
    this.#budget.expansion += cost.size;
    if (this.#budget.expansion > YAML_LIMITS.maxAliasExpansionBytes) {
      throw limit(
        alias,
        `aliases expand to more than ${YAML_LIMITS.maxAliasExpansionBytes} bytes of YAML (at *${alias.source})`,
      );
    }
    if (level + cost.depth > YAML_LIMITS.maxDepth) {
      throw limit(
        alias,
        `through alias *${alias.source}, collections are nested more than ${YAML_LIMITS.maxDepth} levels deep`,
      );
    }
    return cost;
  }

  #collection(collection: YAMLMap.Parsed | YAMLSeq.Parsed, level: number): NodeCost {
    this.#open.add(collection);
    const keys = isMap(collection) ? new Set<unknown>() : undefined;
    let size = 2;
    let depth = 0;
    for (const item of collection.items as unknown[]) {
      const parts = isPair(item) ? [item.key, item.value] : [item];
      if (keys && isPair(item) && isScalar(item.key)) this.#key(keys, item.key as Scalar.Parsed);
      for (const part of parts) {
        const child = this.visit(part, level + 1);
        size += child.size + (parts.length > 1 ? 1 : 0);
        depth = Math.max(depth, child.depth);
      }
    }
    this.#open.delete(collection);
    return { size, depth: depth + 1 };
  }

  /** The library's rule: scalar keys with equal (===) values are duplicates; NaN equals nothing. */
  #key(keys: Set<unknown>, key: Scalar.Parsed): void {
    const value = key.value;
    if (keys.has(value) && !Number.isNaN(value) && ++this.#budget.duplicates <= YAML_LIMITS.maxErrors)
      this.#duplicates.push(key.range[0]);
    keys.add(value);
  }
}

function limit(node: ParsedNode, message: string): YamlLimitError {
  return new YamlLimitError('yaml-too-complex', node.range[0], message);
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

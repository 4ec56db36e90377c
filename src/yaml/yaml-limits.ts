/**
 * The limits that keep one hostile YAML file from stalling or exhausting the poller, checked
 * while the yaml library lexes, parses and composes, before it builds anything expensive.
 */
import type { Alias, CST, ParsedNode, Scalar, YAMLMap, YAMLSeq } from 'yaml';
import {
  type Composer,
  type Document,
  isAlias,
  isCollection,
  isMap,
  isNode,
  isPair,
  isScalar,
  Lexer,
  type LineCounter,
  Parser,
} from 'yaml';
import type { DiagnosticCode } from './diagnostic.ts';

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
export class YamlLimitError extends Error {
  readonly code: DiagnosticCode;
  readonly offset: number;
  constructor(code: DiagnosticCode, offset: number, message: string) {
    super(message);
    this.code = code;
    this.offset = offset;
  }
}

/**
 * The CST tokens of `text`, from the library's own lexer and parser, stopped as soon as collections
 * nest deeper than YAML_LIMITS.maxDepth. Both are iterative: the parser keeps the collections
 * being built on an explicit stack, which is exactly the nesting that the composer and toJS will
 * recurse through. Watching it costs nothing, sees what the library sees (quotes, block scalars,
 * comments, flow and block collections alike), and stops a bracket bomb after a hundred tokens.
 */
export function* boundedTokens(
  text: string,
  lineCounter: LineCounter,
  errors: ErrorLimit,
): Generator<CST.Token> {
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
export class ErrorLimit {
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
export function limitComposerErrors(composer: Composer, errors: ErrorLimit): void {
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
export interface FileBudget {
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
export function checkNodes(doc: Document.Parsed, budget: FileBudget, duplicates: number[]): void {
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

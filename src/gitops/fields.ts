/** Reading fields out of an untyped YAML value while reporting, with positions, what is wrong. */
import { type Diagnostic, type DiagnosticCode, fieldPath } from '../yaml/diagnostic.ts';
import type { FieldPath, YamlDocument } from '../yaml/yaml-file.ts';

export type Fields = Record<string, unknown>;

export function isFields(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function describeType(value: unknown): string {
  if (value === null || value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `the ${typeof value} ${JSON.stringify(value)}`;
}

/** Reports problems located in one YAML document of one file. */
export class FieldReporter {
  readonly file: string;
  readonly #document: YamlDocument;
  readonly #multiDocument: boolean;
  readonly #out: Diagnostic[];

  constructor(file: string, document: YamlDocument, multiDocument: boolean, out: Diagnostic[]) {
    this.file = file;
    this.#document = document;
    this.#multiDocument = multiDocument;
    this.#out = out;
  }

  /**
   * Reports a problem with the field at `path`. The position is that of its value, of its key
   * (`'key'`, e.g. for an unknown field), or of its parent (`'parent'`, for a missing field).
   */
  report(
    code: DiagnosticCode,
    path: FieldPath,
    message: string,
    at: 'key' | 'value' | 'parent' = 'value',
  ): void {
    const position =
      at === 'parent' ? this.#document.locate(path.slice(0, -1)) : this.#document.locate(path, at);
    this.#out.push({
      code,
      file: this.file,
      ...(this.#multiDocument && { document: this.#document.index }),
      ...(position && { line: position.line, column: position.column }),
      ...(path.length > 0 && { field: fieldPath(path) }),
      message,
    });
  }

  /** A mapping at `path`, or undefined after reporting what was found instead. */
  mapping(value: unknown, path: FieldPath): Fields | undefined {
    if (isFields(value)) return value;
    this.report(
      path.length === 0 ? 'not-a-mapping' : 'invalid-value',
      path,
      `must be a mapping, found ${describeType(value)}`,
    );
    return undefined;
  }

  /** A required non-empty string field; reports when it is missing or not a string. */
  requiredString(parent: Fields, key: string, path: FieldPath): string | undefined {
    if (!(key in parent) || parent[key] === null) {
      this.report('missing-field', path, 'is required', 'parent');
      return undefined;
    }
    return this.optionalString(parent, key, path);
  }

  /** An optional string field: undefined when absent; reported when present but not a non-empty string. */
  optionalString(parent: Fields, key: string, path: FieldPath): string | undefined {
    const value = parent[key];
    if (value === undefined || value === null) return undefined;
    if (typeof value !== 'string' || value === '') {
      this.report('invalid-value', path, `must be a non-empty string, found ${describeType(value)}`);
      return undefined;
    }
    return value;
  }

  /** A map of string to string (labels, annotations). */
  stringMap(value: unknown, path: FieldPath): Record<string, string> | undefined {
    const map = this.mapping(value, path);
    if (!map) return undefined;
    let ok = true;
    for (const [key, entry] of Object.entries(map)) {
      if (typeof entry !== 'string') {
        this.report(
          'invalid-value',
          [...path, key],
          `must be a string, found ${describeType(entry)} (quote it)`,
        );
        ok = false;
      }
    }
    return ok ? (map as Record<string, string>) : undefined;
  }

  /** Reports every key of `value` that is not in `allowed`. */
  onlyKnownFields(value: Fields, allowed: readonly string[], path: FieldPath): void {
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key)) {
        const where = path.length === 0 ? 'at the top level' : `in ${fieldPath(path)}`;
        this.report(
          'unknown-field',
          [...path, key],
          `unknown field "${key}" ${where}; allowed: ${allowed.join(', ')}`,
          'key',
        );
      }
    }
  }
}

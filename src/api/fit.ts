/**
 * Fitting strings to a schema. Much of what the controller writes into a Transaction's status
 * comes from others: a cancel reason annotation, a kubelet's message, a custom resource's Ready
 * reason, an API server's or admission webhook's error. One string longer than its field's
 * maxLength, or a reason that does not match its pattern, and the API server refuses the whole
 * status write. So every string is fitted to its field before the write: cut to maxLength with a
 * marker saying so, and a reason rewritten to the pattern ("Waiting for DB" → "WaitingForDB").
 * The limits are read from the schema node itself (the one the CRD is generated from), so they
 * cannot drift from what the API server enforces. Pure.
 */
import type { OpenApiSchema } from './schema.ts';

/** What a cut string ends with, so a reader knows there was more. */
export const TRUNCATION_MARKER = '… [truncated]';

/** The pattern of a condition's (and a health assessment's) reason: metav1.Condition's. */
export const REASON_PATTERN = '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$';

/** A reason that had nothing usable in it (empty, or no letter at all). */
export const UNKNOWN_REASON = 'Unknown';

/**
 * `text` cut to at most `max` characters, ending with the marker when it was cut. Counted in
 * UTF-16 units, never more than the code points the API server counts, and never splitting a
 * surrogate pair.
 */
export function truncateText(text: string, max: number): string {
  if (text.length <= max) return text;
  const marker = max >= TRUNCATION_MARKER.length * 2 ? TRUNCATION_MARKER : '';
  let end = max - marker.length;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--; // a high surrogate whose pair would be cut off
  return `${text.slice(0, end)}${marker}`;
}

/**
 * A CamelCase reason matching REASON_PATTERN made of `text`'s words: "Waiting for DB" →
 * "WaitingForDB", "back-off: 5s" → "BackOff5s". A reason that already matches is kept as it is.
 */
export function toReason(text: string, max = Number.POSITIVE_INFINITY): string {
  if (matches(REASON_PATTERN, text) && text.length <= max) return text;
  const words = text.split(/[^A-Za-z0-9_]+/).filter(Boolean);
  const camel = words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
  const fromLetter = camel.replace(/^[^A-Za-z]+/, '');
  const cut = fromLetter.slice(0, max).replace(/[^A-Za-z0-9_]+$/, '');
  return cut || UNKNOWN_REASON;
}

const compiled = new Map<string, RegExp>();

/** Whether `text` matches `pattern` (compiled once: every status write checks every reason). */
function matches(pattern: string, text: string): boolean {
  let re = compiled.get(pattern);
  if (!re) {
    re = new RegExp(pattern);
    compiled.set(pattern, re);
  }
  return re.test(text);
}

/** How a string that does not match a pattern is made to: one rewrite per pattern the schemas use. */
const REWRITES: ReadonlyMap<string, (text: string, max: number) => string> = new Map([
  [REASON_PATTERN, toReason],
]);

/** Whether `fitToSchema` knows how to make any string match `pattern`. */
export const canFitPattern = (pattern: string): boolean => REWRITES.has(pattern);

/**
 * `value` with every string in it fitted to its schema node (maxLength, pattern), at any depth.
 * Fields the schema does not describe, and values of other types, are kept as they are; a string
 * whose pattern has no rewrite (not one the controller fills from outside) is only cut.
 */
export function fitToSchema<T>(schema: OpenApiSchema, value: T): T {
  return fitValue(schema, value) as T;
}

function fitValue(schema: OpenApiSchema, value: unknown): unknown {
  if (typeof value === 'string') return fitString(schema, value);
  if (Array.isArray(value)) {
    const items = schema.items;
    return items ? value.map((v) => fitValue(items, v)) : value;
  }
  if (typeof value === 'object' && value !== null && schema.properties) {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      const field = schema.properties[key];
      out[key] = field ? fitValue(field, v) : v;
    }
    return out;
  }
  return value;
}

function fitString(schema: OpenApiSchema, text: string): string {
  if (schema.type !== 'string') return text;
  const max = schema.maxLength ?? Number.POSITIVE_INFINITY;
  const rewrite = schema.pattern === undefined ? undefined : REWRITES.get(schema.pattern);
  if (rewrite && !matches(schema.pattern as string, text)) return rewrite(text, max);
  if (rewrite) return text.length <= max ? text : rewrite(text, max);
  return truncateText(text, max);
}

/** The schema node at `path` ('*' steps into an array's items), for callers fitting one field. */
export function schemaAt(schema: OpenApiSchema, ...path: string[]): OpenApiSchema {
  let at: OpenApiSchema | undefined = schema;
  for (const step of path) at = step === '*' ? at?.items : at?.properties?.[step];
  if (!at) throw new Error(`the schema has no field ${path.join('.')}`);
  return at;
}

/** The maxLength of the string field at `path`; throws if the schema sets none. */
export function maxLengthAt(schema: OpenApiSchema, ...path: string[]): number {
  const max = schemaAt(schema, ...path).maxLength;
  if (max === undefined) throw new Error(`the schema sets no maxLength on ${path.join('.')}`);
  return max;
}

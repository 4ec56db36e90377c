/**
 * A strict reader of the Prometheus text exposition format 0.0.4, for tests: it throws on any
 * line it does not understand, so a malformed scrape fails the test instead of being skipped.
 * https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
 */

export type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';

export interface Sample {
  /** The sample's own name, e.g. `x_bucket` in family `x`. */
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface Family {
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  readonly samples: Sample[];
}

export type Exposition = ReadonlyMap<string, Family>;

const TYPES = new Set<string>(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
/** Sample names that belong to a family other than their own name. */
const SUFFIXES: Readonly<Record<MetricType, readonly string[]>> = {
  counter: [''],
  gauge: [''],
  untyped: [''],
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['', '_sum', '_count'],
};

export function parseExposition(text: string): Exposition {
  const families = new Map<string, Family>();
  const help = new Map<string, string>();
  const seen = new Set<string>();
  for (const [index, line] of text.split('\n').entries()) {
    const where = `line ${index + 1}: ${JSON.stringify(line)}`;
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      readComment(line, where, families, help);
      continue;
    }
    const sample = parseSample(line, where);
    const series = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (seen.has(series)) throw new Error(`duplicate series at ${where}`);
    seen.add(series);
    familyOf(families, sample.name, where).samples.push(sample);
  }
  return families;
}

/** `# HELP` and `# TYPE` lines; any other comment is ignored, as Prometheus does. */
function readComment(
  line: string,
  where: string,
  families: Map<string, Family>,
  help: Map<string, string>,
): void {
  if (line.startsWith('# HELP ')) {
    const [name, doc] = splitFirst(line.slice('# HELP '.length), ' ');
    help.set(name, unescapeHelp(doc));
  } else if (line.startsWith('# TYPE ')) {
    const [name, type] = splitFirst(line.slice('# TYPE '.length), ' ');
    if (!NAME.test(name) || !TYPES.has(type)) throw new Error(`bad TYPE at ${where}`);
    if (families.has(name)) throw new Error(`second TYPE for ${name} at ${where}`);
    families.set(name, { name, type: type as MetricType, help: help.get(name) ?? '', samples: [] });
  }
}

function familyOf(families: Map<string, Family>, sampleName: string, where: string): Family {
  for (const family of families.values()) {
    const belongs = SUFFIXES[family.type].some((suffix) => `${family.name}${suffix}` === sampleName);
    if (belongs) return family;
  }
  throw new Error(`sample without a preceding TYPE at ${where}`);
}

function parseSample(line: string, where: string): Sample {
  const brace = line.indexOf('{');
  const space = line.indexOf(' ');
  const hasLabels = brace !== -1 && (space === -1 || brace < space);
  if (!hasLabels && space === -1) throw new Error(`sample without a value at ${where}`);
  const name = line.slice(0, hasLabels ? brace : space);
  if (!NAME.test(name)) throw new Error(`bad metric name at ${where}`);
  let labels: Record<string, string> = {};
  let rest = line.slice(name.length);
  if (hasLabels) {
    const parsed = parseLabels(rest, where);
    labels = parsed.labels;
    rest = rest.slice(parsed.length);
  }
  const fields = rest.trim().split(/ +/);
  if (!rest.startsWith(' ') || fields.length > 2) throw new Error(`bad value at ${where}`);
  return { name, labels, value: parseValue(fields[0] ?? '', where) };
}

/** Parses `{a="x",b="y\"z"}` from the start of `text`; returns the labels and the characters used. */
function parseLabels(text: string, where: string): { labels: Record<string, string>; length: number } {
  const labels: Record<string, string> = {};
  let i = 1;
  while (text[i] !== '}') {
    const eq = text.indexOf('=', i);
    const labelName = text.slice(i, eq);
    if (eq === -1 || !LABEL_NAME.test(labelName) || text[eq + 1] !== '"')
      throw new Error(`bad label at ${where}`);
    if (Object.hasOwn(labels, labelName)) throw new Error(`repeated label ${labelName} at ${where}`);
    let value = '';
    for (i = eq + 2; text[i] !== '"'; i++) {
      if (i >= text.length) throw new Error(`unterminated label value at ${where}`);
      if (text[i] === '\\') {
        i++;
        value += text[i] === 'n' ? '\n' : text[i];
      } else value += text[i];
    }
    labels[labelName] = value;
    i++;
    if (text[i] === ',') i++;
    else if (text[i] !== '}') throw new Error(`expected , or } at ${where}`);
  }
  return { labels, length: i + 1 };
}

const SPECIAL_VALUES = new Map([
  ['+inf', Number.POSITIVE_INFINITY],
  ['inf', Number.POSITIVE_INFINITY],
  ['-inf', Number.NEGATIVE_INFINITY],
  ['nan', Number.NaN],
]);

/** A sample value or an `le` bound: a float, `+Inf`, `-Inf` or `NaN`. */
export function parseValue(text: string, where = JSON.stringify(text)): number {
  // Prometheus parses values with Go's strconv.ParseFloat, which ignores the case of Inf and NaN;
  // prom-client relies on it and writes `Nan` (e.g. event-loop lag before its first sample).
  const special = SPECIAL_VALUES.get(text.toLowerCase());
  if (special !== undefined) return special;
  const value = Number(text);
  if (text === '' || Number.isNaN(value)) throw new Error(`bad value at ${where}`);
  return value;
}

function splitFirst(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator);
  return at === -1 ? [text, ''] : [text.slice(0, at), text.slice(at + separator.length)];
}

function unescapeHelp(text: string): string {
  return text.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
}

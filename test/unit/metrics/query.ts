/** Reading values out of a parsed exposition, the way a PromQL selector would. */
import { type Exposition, type Family, parseExposition, parseValue, type Sample } from './exposition.ts';

export type Labels = Readonly<Record<string, string>>;

/** Scrapes a Metrics (or anything with `text()`) and parses the result. */
export async function scrape(metrics: { text(): Promise<string> }): Promise<Exposition> {
  return parseExposition(await metrics.text());
}

export function family(exposition: Exposition, name: string): Family {
  const found = exposition.get(name);
  if (!found) throw new Error(`no metric family ${name}; have ${[...exposition.keys()].join(', ')}`);
  return found;
}

/** The value of the one sample called `name` whose labels are exactly `labels`; undefined if none. */
export function sampleValue(exposition: Exposition, name: string, labels: Labels = {}): number | undefined {
  for (const f of exposition.values()) {
    const sample = f.samples.find((s) => s.name === name && sameLabels(s.labels, labels));
    if (sample) return sample.value;
  }
  return undefined;
}

/** The samples called `name` (any labels), e.g. every `janus_transactions_active` series. */
export function samplesOf(exposition: Exposition, name: string): Sample[] {
  return [...exposition.values()].flatMap((f) => f.samples.filter((s) => s.name === name));
}

/** The label names a family's series carry, without the histogram's own `le`. */
export function labelNamesOf(f: Family): string[] {
  const names = new Set(f.samples.flatMap((s) => Object.keys(s.labels)));
  names.delete('le');
  return [...names].sort();
}

export interface HistogramSeries {
  /** Upper bound → cumulative count, in exposition order, ending with +Inf. */
  readonly buckets: ReadonlyArray<readonly [number, number]>;
  readonly sum: number;
  readonly count: number;
}

/** One histogram series, checked for the invariants Prometheus relies on. */
export function histogramOf(exposition: Exposition, name: string, labels: Labels = {}): HistogramSeries {
  const f = family(exposition, name);
  if (f.type !== 'histogram') throw new Error(`${name} is a ${f.type}, not a histogram`);
  const buckets = f.samples
    .filter((s) => s.name === `${name}_bucket` && sameLabels(withoutLe(s.labels), labels))
    .map((s) => [parseValue(s.labels.le ?? ''), s.value] as const);
  const sum = sampleValue(exposition, `${name}_sum`, labels);
  const count = sampleValue(exposition, `${name}_count`, labels);
  if (buckets.length === 0 || sum === undefined || count === undefined) {
    throw new Error(`no histogram series ${name}${JSON.stringify(labels)}`);
  }
  for (const [i, [le, n]] of buckets.entries()) {
    const previous = buckets[i - 1];
    if (previous && (le <= previous[0] || n < previous[1]))
      throw new Error(`${name} buckets are not cumulative`);
  }
  const last = buckets.at(-1);
  if (last?.[0] !== Number.POSITIVE_INFINITY || last[1] !== count) {
    throw new Error(`${name}: the +Inf bucket must equal _count`);
  }
  return { buckets, sum, count };
}

/** The cumulative count of the bucket with upper bound `le`. */
export function bucketCount(series: HistogramSeries, le: number): number {
  const bucket = series.buckets.find(([bound]) => bound === le);
  if (!bucket) throw new Error(`no bucket le=${le}; have ${series.buckets.map(([b]) => b).join(', ')}`);
  return bucket[1];
}

function sameLabels(actual: Labels, expected: Labels): boolean {
  const keys = Object.keys(actual);
  return keys.length === Object.keys(expected).length && keys.every((k) => actual[k] === expected[k]);
}

function withoutLe(labels: Labels): Labels {
  const { le: _, ...rest } = labels;
  return rest;
}

/** Median and spread of repeated measurements. */
export interface Figure {
  median: number;
  min: number;
  max: number;
  runs: number;
  unit: string;
}

export function figure(values: number[], unit: string): Figure {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
  return { median, min: sorted[0] ?? 0, max: sorted.at(-1) ?? 0, runs: values.length, unit };
}

export function show(f: Figure, digits = 2): string {
  const r = (n: number) => n.toFixed(digits);
  return f.runs > 1
    ? `${r(f.median)} ${f.unit} (${r(f.min)}–${r(f.max)}, n=${f.runs})`
    : `${r(f.median)} ${f.unit}`;
}

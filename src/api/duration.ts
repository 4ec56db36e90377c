/** Go-style durations ("90s", "5m", "1h30m", "1.5h"), as the CRD's `lockTimeout` and `timeout` and the CLI's flags use them. */

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};
const DURATION = /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/;
const DURATION_PART = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g;

/** Milliseconds, or undefined when `text` is not a duration. */
export function tryParseDuration(text: string): number | undefined {
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(DURATION_PART))
    total += Number(amount) * (UNIT_MS[unit ?? ''] ?? 0);
  return total;
}

/** Milliseconds; throws a message naming the expected form when `text` is not a duration. */
export function parseDuration(text: string): number {
  const ms = tryParseDuration(text);
  if (ms === undefined) throw new Error(`"${text}" is not a duration such as "30s", "5m" or "1h30m"`);
  return ms;
}

/**
 * What was delivered, as data: one entry per (provider, event id), the event id being
 * `<uid>/<phase>` (event.ts), with the time it was delivered. Kept so that a restarted
 * controller, replaying the last window's events, does not send again what a previous one sent
 * (ledger-store.ts keeps it in a ConfigMap). Pure: parse, add, prune, render.
 */

import { compareCodeUnits } from '../text/order.ts';

/** Entries kept at most; the oldest go first. About 150 bytes each: well under a ConfigMap's 1 MiB. */
export const MAX_LEDGER_ENTRIES = 2000;

/** provider + "\n" + event id → when it was delivered (ms since the epoch). */
export type Ledger = ReadonlyMap<string, number>;

export function ledgerKey(provider: string, event: string): string {
  return `${provider}\n${event}`;
}

/** Reads the stored form; anything that does not parse is left out (the ledger only saves work). */
export function parseLedger(text: string | undefined): Map<string, number> {
  const ledger = new Map<string, number>();
  if (!text) return ledger;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return ledger;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return ledger;
  for (const [key, value] of Object.entries(parsed)) {
    const at = typeof value === 'string' ? Date.parse(value) : Number.NaN;
    if (!Number.isNaN(at)) ledger.set(key, at);
  }
  return ledger;
}

/** Both ledgers' entries, the later time of each. */
export function mergeLedgers(a: Ledger, b: Ledger): Map<string, number> {
  const merged = new Map(a);
  for (const [key, at] of b) merged.set(key, Math.max(at, merged.get(key) ?? at));
  return merged;
}

/**
 * Without the entries older than `keepMs` (a replay never reaches them) and, past `max`, without
 * the oldest.
 */
export function prunedLedger(
  ledger: Ledger,
  now: number,
  keepMs: number,
  max = MAX_LEDGER_ENTRIES,
): Map<string, number> {
  const kept = [...ledger].filter(([, at]) => now - at < keepMs).sort((x, y) => y[1] - x[1]);
  return new Map(kept.slice(0, max));
}

/** The stored form: a JSON object, keys sorted so an unchanged ledger renders the same. */
export function renderLedger(ledger: Ledger): string {
  const entries = [...ledger].sort(([a], [b]) => compareCodeUnits(a, b));
  return JSON.stringify(Object.fromEntries(entries.map(([key, at]) => [key, new Date(at).toISOString()])));
}

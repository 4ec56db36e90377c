/**
 * What `janus status` prints of the Sources beside the Transactions: each one's drift
 * (docs/sources.md, "Drift"): how many objects differ, when they were checked, the correction in
 * flight or how the last one ended, and when the next may run (the backoff after failed ones).
 * Pure.
 */
import type { Source } from '../api/v1alpha1/index.ts';
import { driftIntervalMs } from '../sources/drift-decision.ts';
import { printable } from '../text/printable.ts';
import { ageOf, formatAge, renderTable } from './table.ts';

export const SOURCE_DRIFT_HEADER = [
  'NAMESPACE',
  'SOURCE',
  'APPLIED',
  'DRIFT',
  'CHECKED',
  'CORRECTION',
  'NEXT CORRECTION',
] as const;

/** A timestamp as the status has it, to the second: "2026-11-28T12:40:00Z". */
const toSecond = (timestamp: string) => timestamp.replace(/\.\d+Z$/, 'Z');

/** The correction in flight, or the last one and how it ended: "shop-drift-7 RolledBack 3m ago, 2 failed in a row". */
function correctionCell(source: Source, off: boolean, nowMs: number): string {
  const c = source.status?.drift?.correction;
  if (!c?.transaction) return source.spec.drift?.correct || off ? '' : 'off (report only)';
  const when = c.time ? ageOf(c.time, nowMs) : undefined;
  if (c.outcome === 'InProgress')
    return `${c.transaction} InProgress${when ? `, started ${when} ago` : ''}${c.failures ? `, after ${c.failures} failed` : ''}`;
  const failures = c.failures ? `, ${c.failures} failed in a row` : '';
  return `${c.transaction} ${c.outcome ?? ''}${when ? ` ${when} ago` : ''}${failures}`;
}

/** When the next correction may run: after the backoff ("in 8m (2026-…Z)"), at the next check, or never asked for. */
function nextCorrectionCell(source: Source, nowMs: number): string {
  const drift = source.status?.drift;
  if (source.spec.drift?.correct !== true || drift?.correction?.outcome === 'InProgress') return '';
  const retryAfter = drift?.correction?.retryAfter;
  const at = retryAfter ? Date.parse(retryAfter) : Number.NaN;
  if (retryAfter && !Number.isNaN(at) && at > nowMs)
    return `in ${formatAge(at - nowMs)} (${toSecond(retryAfter)})`;
  return (drift?.count ?? 0) > 0 ? 'at the next check' : '';
}

/** One Source's row; printable, since its status carries names from Git. */
export function sourceDriftRow(source: Source, nowMs: number): string[] {
  const drift = source.status?.drift;
  const off = driftIntervalMs(source) === 0;
  return [
    source.metadata.namespace ?? '',
    source.metadata.name,
    source.status?.lastApplied?.shortRevision ?? '',
    off ? 'off' : drift?.checkedAt ? String(drift.count ?? 0) : '',
    drift?.checkedAt ? `${ageOf(drift.checkedAt, nowMs)} ago` : off ? '' : 'never',
    correctionCell(source, off, nowMs),
    nextCorrectionCell(source, nowMs),
  ].map((cell) => printable(cell));
}

/** The Sources' table under its title; nothing when there are none. */
export function renderSourceDriftTable(sources: readonly Source[], nowMs: number): string {
  if (sources.length === 0) return '';
  return `\nSources (drift):\n${renderTable(
    SOURCE_DRIFT_HEADER,
    sources.map((s) => sourceDriftRow(s, nowMs)),
  )}`;
}

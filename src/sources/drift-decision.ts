/**
 * Drift of a source (docs/sources.md, "Drift"), the decisions: when a source is checked, where the
 * last applied render of each inventory object is found, what the status says after a check
 * (`status.drift`, the `Drifted` condition), whether a person is told, and when a correction may
 * run (the backoff after failed ones). The requests are drift-monitor.ts's. Pure.
 */

import { tryParseDuration } from '../api/duration.ts';
import { fitToSchema } from '../api/fit.ts';
import {
  type Change,
  type Condition,
  type InventoryEntry,
  isTerminal,
  MAX_DRIFT_LISTED,
  type Phase,
  type Source,
  type SourceSpec,
  type SourceStatus,
  sourceStatusSchema,
  type Transaction,
} from '../api/v1alpha1/index.ts';
import type { KubeObject } from '../kube/resources.ts';
import { mergeConditions } from '../saga/status.ts';
import { identityKey, type ObjectIdentity, objectDigest } from './inventory.ts';

/** How an object of the inventory differs from its last applied render. */
export interface DriftedObject {
  object: ObjectIdentity;
  /** missing: deleted; changed: a field the source set has another value or is gone; conflict: another manager took a field the source set. */
  reason: 'missing' | 'changed' | 'conflict';
  /** The paths that differ, or the API server's conflict message. */
  detail: string;
}

/** One check's outcome: the objects compared, and those that differ. */
export interface DriftCheck {
  checkedAt: Date;
  /** The commit whose render was compared (lastApplied). */
  revision: string;
  checked: number;
  drifted: DriftedObject[];
  /** Inventory objects not compared (their render not found, a request refused): named in the log. */
  skipped: number;
}

/** Objects named in the Drifted condition's message; the status lists MAX_DRIFT_LISTED. */
export const MAX_DRIFT_IN_MESSAGE = 3;

/** `<apiVersion> <kind> <namespace>/<name>`, or `<apiVersion> <kind> <name>` when cluster-scoped. */
export function describeIdentity(o: ObjectIdentity): string {
  return `${o.apiVersion} ${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
}

/** The interval of a source's checks in ms; 0: never. `overrideMs` is the test-only setting. */
export function driftIntervalMs(source: Pick<Source, 'spec'>, overrideMs?: number): number {
  const ms = tryParseDuration(source.spec.drift?.interval ?? '10m') ?? 0;
  if (ms === 0) return 0;
  return overrideMs !== undefined && overrideMs > 0 ? overrideMs : ms;
}

export type DriftDue = { due: true } | { due: false; inMs?: number };

/**
 * Whether a source is checked now: never with interval 0 or before anything was applied; not while
 * its transaction or a correction is in flight (the objects are about to change); at once after a
 * commit was applied or a correction ended since the last check; else once the interval has
 * passed since it.
 */
export function driftDue(status: SourceStatus | undefined, intervalMs: number, now: Date): DriftDue {
  if (intervalMs <= 0 || !status?.lastApplied?.revision || !status.inventory?.length) return { due: false };
  if (status.lastAttempted?.outcome === 'InProgress') return { due: false };
  if (status.drift?.correction?.outcome === 'InProgress') return { due: false };
  const checkedAt = status.drift?.checkedAt ? Date.parse(status.drift.checkedAt) : Number.NaN;
  if (Number.isNaN(checkedAt)) return { due: true };
  // A commit applied since: its objects were just applied and verified, the others were in sync
  // at the last check. Looked at again at once only if that check found drift (its list may be
  // stale); else at the interval: a check is 2 requests per inventory object, after every commit.
  const applied = status.lastApplied.time ? Date.parse(status.lastApplied.time) : Number.NaN;
  if (!Number.isNaN(applied) && applied > checkedAt && (status.drift?.count ?? 0) > 0) return { due: true };
  const corrected = status.drift?.correction?.time ? Date.parse(status.drift.correction.time) : Number.NaN;
  if (!Number.isNaN(corrected) && corrected > checkedAt) return { due: true };
  const inMs = checkedAt + intervalMs - now.getTime();
  return inMs <= 0 ? { due: true } : { due: false, inMs };
}

/**
 * The rendered object of each inventory entry, found in `transactions` (the source's, newest
 * first): an Apply change whose content has the entry's identity and digest is what was applied
 * for it, whichever transaction applied it. Entries with none are returned as missing.
 */
export function appliedContents(
  inventory: readonly InventoryEntry[],
  transactions: readonly Pick<Transaction, 'spec'>[],
  digestKey: string | Uint8Array,
): { found: Map<string, KubeObject>; missing: InventoryEntry[] } {
  const wanted = new Map(inventory.map((e) => [identityKey(e), e]));
  const found = new Map<string, KubeObject>();
  for (const txn of transactions) {
    for (const change of txn.spec.changes ?? []) {
      if (change.type !== 'Apply' || !change.content) continue;
      const content = change.content as unknown as KubeObject;
      if (!content.metadata?.name) continue;
      const key = identityKey({
        apiVersion: String(content.apiVersion),
        kind: String(content.kind),
        namespace: content.metadata.namespace,
        name: content.metadata.name,
      });
      const entry = wanted.get(key);
      if (!entry || found.has(key) || objectDigest(content, digestKey) !== entry.digest) continue;
      found.set(key, content);
    }
    if (found.size === wanted.size) break;
  }
  return { found, missing: inventory.filter((e) => !found.has(identityKey(e))) };
}

/** The Drifted condition's message: how many, the first ones named with what differs. */
export function driftMessage(
  check: Pick<DriftCheck, 'revision' | 'checked' | 'drifted'> & { skipped?: number },
): string {
  const at = check.revision.slice(0, 7);
  const skipped = check.skipped
    ? `; ${check.skipped} not compared (their last applied render not found, or a request refused: see janus run's log)`
    : '';
  if (check.drifted.length === 0)
    return `the ${check.checked} live object(s) match the render of ${at}, as last applied${skipped}`;
  const named = check.drifted
    .slice(0, MAX_DRIFT_IN_MESSAGE)
    .map((d) => `${describeIdentity(d.object)} (${d.reason}: ${d.detail})`);
  const more = check.drifted.length - named.length;
  return `${check.drifted.length} object(s) differ from the render of ${at}, as last applied: ${named.join('; ')}${more > 0 ? `; and ${more} more` : ''}${skipped}`;
}

/** The status after a check: `drift` and the `Drifted` condition; the rest as it was. */
export function driftStatus(
  status: SourceStatus,
  check: DriftCheck,
  now: Date,
  generation?: number,
): SourceStatus {
  const drifted = check.drifted.length > 0;
  const condition = {
    type: 'Drifted',
    status: (drifted ? 'True' : 'False') as Condition['status'],
    reason: drifted ? 'Drifted' : 'InSync',
    message: driftMessage(check),
  };
  // Drift gone by itself: a later drift's corrections start afresh, without the old backoff.
  const before = drifted || !status.drift ? status.drift : withoutCorrectionBackoff(status.drift);
  return fitToSchema(sourceStatusSchema.openApi, {
    ...status,
    drift: {
      ...before,
      checkedAt: check.checkedAt.toISOString(),
      count: check.drifted.length,
      objects: check.drifted.slice(0, MAX_DRIFT_LISTED).map((d) => describeIdentity(d.object)),
    },
    conditions: mergeConditions(status.conditions, [condition], now.toISOString(), generation),
  });
}

/**
 * Whether a check is news (a notification): drift found where there was none, another set of
 * objects drifted, or drift gone. The same drift found again at every interval is not.
 */
export function driftNews(
  before: SourceStatus['drift'] | undefined,
  after: NonNullable<SourceStatus['drift']>,
): 'drifted' | 'resolved' | undefined {
  const was = before?.count ?? 0;
  const is = after.count ?? 0;
  if (is === 0) return was > 0 ? 'resolved' : undefined;
  if (was === 0) return 'drifted';
  const same = was === is && JSON.stringify(before?.objects ?? []) === JSON.stringify(after.objects ?? []);
  return same ? undefined : 'drifted';
}

/** Kubernetes' bound on a Transaction's name. */
const MAX_NAME = 63;

/**
 * A correction's name: `<source>-drift-<sequence>` (the Git-order sequence it takes, unique in the
 * repository), the source's name cut if the whole passes 63 characters (its label and
 * spec.sourceRef name it whole).
 */
export function correctionName(source: string, sequence: number): string {
  const tail = `-drift-${sequence}`;
  return `${source.slice(0, MAX_NAME - tail.length).replace(/-+$/, '')}${tail}`;
}

/**
 * Whether `transaction` is a drift correction of `source` (its name is correctionName's for some
 * sequence): a commit's transaction, `<source>-<hex>`, never is.
 */
export function isCorrectionOf(transaction: string, source: string): boolean {
  const sequence = /-drift-(\d{1,15})$/.exec(transaction)?.[1];
  return sequence !== undefined && correctionName(source, Number(sequence)) === transaction;
}

/**
 * The Apply changes of a correction: each drifted object's last applied render, in inventory order;
 * one applied encrypted (its key in `sealed`) as the same `sopsContent`.
 */
export function correctionChanges(
  inventory: readonly InventoryEntry[],
  drifted: readonly DriftedObject[],
  contents: ReadonlyMap<string, KubeObject>,
  sealed: ReadonlyMap<string, string> = new Map(),
): Change[] {
  const wanted = new Set(drifted.map((d) => identityKey(d.object)));
  return inventory.flatMap((entry) => {
    const key = identityKey(entry);
    const content = contents.get(key);
    if (!wanted.has(key) || !content) return [];
    const sopsContent = sealed.get(key);
    return [
      {
        type: 'Apply' as const,
        target: {
          apiVersion: entry.apiVersion,
          kind: entry.kind,
          ...(entry.namespace && { namespace: entry.namespace }),
          name: entry.name,
        },
        // An object applied encrypted is put back encrypted, as it was applied: never in clear.
        ...(sopsContent !== undefined
          ? { sopsContent }
          : { content: content as unknown as Record<string, unknown> }),
      },
    ];
  });
}

type Drift = NonNullable<SourceStatus['drift']>;
type Correction = NonNullable<Drift['correction']>;

/**
 * The longest wait between two corrections of a source that keep failing (unless its interval is
 * longer: checks are never more frequent than it). Each failed correction is a whole transaction
 * (locks, snapshots, the health gate, a rollback) and a notification; an hour bounds that cost at
 * 24 a day per source however short the interval, and a correction whose cause was fixed meanwhile
 * still runs within the hour, without anyone having to push a commit.
 */
export const MAX_CORRECTION_BACKOFF_MS = 60 * 60_000;

/**
 * The wait after `failures` corrections in a row ended RolledBack or Failed: the interval, doubled
 * with each further failure (1, 2, 4, 8 × …), at most MAX_CORRECTION_BACKOFF_MS or the interval.
 */
export function correctionBackoffMs(intervalMs: number, failures: number): number {
  if (failures <= 0 || intervalMs <= 0) return 0;
  const cap = Math.max(intervalMs, MAX_CORRECTION_BACKOFF_MS);
  return Math.min(cap, intervalMs * 2 ** Math.min(failures - 1, 30));
}

/** The status with the correction about to be created, InProgress: the failures before it are kept. */
export function startedCorrection(
  status: SourceStatus,
  correction: { transaction: string; objects: number; time: string },
): SourceStatus {
  const failures = status.drift?.correction?.failures;
  return withCorrection(status, { ...correction, outcome: 'InProgress', ...(failures && { failures }) });
}

/**
 * The status once the correction it names ended `outcome` at `time`: Committed clears the
 * backoff; RolledBack or Failed counts one more failure and sets `retryAfter`, `time` plus the
 * backoff (correctionBackoffMs), before which no correction of the source is created. Kept in the
 * status, so a restart of janus run keeps it.
 */
export function endedCorrection(
  status: SourceStatus,
  outcome: 'Committed' | 'RolledBack' | 'Failed',
  time: string,
  intervalMs: number,
): SourceStatus {
  const { failures: before = 0, retryAfter: _, ...correction } = status.drift?.correction ?? {};
  if (outcome === 'Committed') return withCorrection(status, { ...correction, outcome, time });
  const failures = before + 1;
  const ended = Date.parse(time);
  const retryAfter = new Date((Number.isNaN(ended) ? 0 : ended) + correctionBackoffMs(intervalMs, failures));
  return withCorrection(status, {
    ...correction,
    outcome,
    time,
    failures,
    retryAfter: retryAfter.toISOString(),
  });
}

/** What a check that found `drifted` objects does: correct them, or only report them (and, in a backoff, until when). */
export type AfterCheck = { do: 'correct' } | { do: 'report'; heldUntil?: string };

/**
 * After a check (its status written): with `drift.correct` and drift found, a correction, unless
 * failed ones set a `retryAfter` still ahead of `now`: then the drift is only reported until then.
 */
export function afterCheck(
  source: { spec: Pick<SourceSpec, 'drift'>; status?: SourceStatus | undefined },
  drifted: number,
  now: Date,
): AfterCheck {
  if (drifted === 0 || source.spec.drift?.correct !== true) return { do: 'report' };
  const retryAfter = source.status?.drift?.correction?.retryAfter;
  const at = retryAfter ? Date.parse(retryAfter) : Number.NaN;
  if (!retryAfter || Number.isNaN(at) || at <= now.getTime()) return { do: 'correct' };
  return { do: 'report', heldUntil: retryAfter };
}

/** `drift` without a backoff: the failures forgotten (a correction committed, the drift gone, a commit applied). */
export function withoutCorrectionBackoff(drift: Drift): Drift {
  if (!drift.correction || (drift.correction.failures === undefined && !drift.correction.retryAfter))
    return drift;
  const { failures: _f, retryAfter: _r, ...correction } = drift.correction;
  return { ...drift, correction };
}

function withCorrection(status: SourceStatus, correction: Correction): SourceStatus {
  return fitToSchema(sourceStatusSchema.openApi, {
    ...status,
    drift: { ...status.drift, correction },
  });
}

/** What a poll does about a correction in flight, from the state of its Transaction (undefined: not found, or not ours). */
export type CorrectionStep =
  | { do: 'none' }
  | { do: 'wait' }
  | { do: 'settle'; outcome: 'Committed' | 'RolledBack' | 'Failed' };

export function decideCorrection(
  status: SourceStatus | undefined,
  phase: Phase | undefined | 'absent',
): CorrectionStep {
  if (status?.drift?.correction?.outcome !== 'InProgress') return { do: 'none' };
  // Never created (a crash after the status named it): recorded as failed, tried again after the backoff.
  if (phase === 'absent') return { do: 'settle', outcome: 'Failed' };
  if (!isTerminal(phase)) return { do: 'wait' };
  return { do: 'settle', outcome: phase as 'Committed' | 'RolledBack' | 'Failed' };
}

/**
 * The sources whose check starts now: due, not already being checked, the most overdue (oldest
 * check, never checked first) first, as many as the free slots of `concurrency`. A source of 512
 * objects holds one slot while it is checked; the others take the rest.
 */
export function sourcesToCheck(
  sources: readonly Source[],
  running: ReadonlySet<string>,
  concurrency: number,
  now: Date,
  intervalOverrideMs?: number,
): Source[] {
  const key = (s: Source) => `${s.metadata.namespace}/${s.metadata.name}`;
  const checkedAt = (s: Source) => (s.status?.drift?.checkedAt ? Date.parse(s.status.drift.checkedAt) : 0);
  const room = Math.max(0, concurrency - running.size);
  return sources
    .filter((s) => !running.has(key(s)))
    .filter((s) => driftDue(s.status, driftIntervalMs(s, intervalOverrideMs), now).due)
    .sort((a, b) => checkedAt(a) - checkedAt(b))
    .slice(0, room);
}

/**
 * A notification event: what one result record says, read back from the record itself (the
 * results branch's TransactionResult file), so a notification and the results branch can never
 * disagree and there is one outcome model, not two. Pure.
 */

import { sourceCommit } from '../results/result-context.ts';
import type { ResultRecord } from '../results/result-record.ts';
import { printable } from '../text/printable.ts';
import { parseYamlValue } from '../yaml/yaml-file.ts';

/** How loud an event is; routes pass events of at least their `severity`. */
export type Severity = 'info' | 'warning' | 'error';
export const SEVERITIES: readonly Severity[] = ['info', 'warning', 'error'];

/**
 * The phases that notify, and their severity (docs/operations.md, Notifications, has this
 * table): a change applied and healthy is news; a rollback under way is a warning; anything that
 * ended without the change applied needs a human's eyes.
 */
export const PHASE_SEVERITY = {
  Committed: 'info',
  RollingBack: 'warning',
  RolledBack: 'error',
  Failed: 'error',
  Rejected: 'error',
  /** A Source's live objects differ from its last applied render (docs/sources.md, "Drift"). */
  Drifted: 'warning',
  /** They match it again. */
  DriftResolved: 'info',
} as const satisfies Record<string, Severity>;

/** The phases of a Source's drift: events about a Source, not a Transaction. */
export const DRIFT_PHASES: readonly NotifiedPhase[] = ['Drifted', 'DriftResolved'];

export type NotifiedPhase = keyof typeof PHASE_SEVERITY;
export const NOTIFIED_PHASES = Object.keys(PHASE_SEVERITY) as NotifiedPhase[];

export function isNotifiedPhase(phase: string): phase is NotifiedPhase {
  return Object.hasOwn(PHASE_SEVERITY, phase);
}

export interface NotificationEvent {
  /**
   * `<transaction uid>/<phase>` (a rejected directory has no uid: `<namespace>/<name>@<commit>`):
   * the same for a redelivery, so a receiver can drop duplicates (the CloudEvents id).
   */
  id: string;
  namespace: string;
  name: string;
  uid?: string;
  phase: NotifiedPhase;
  severity: Severity;
  /** Why, in one line: the record's message (a health verdict, a conflict, a rejection). */
  reason: string;
  /** The changes the transaction has; for a drift event, the objects drifted. */
  changes: number;
  /** e.g. "2/3": committed over total, as the record says. */
  progress?: string;
  /** The first file errors of a rejection, as "file:line: message". */
  errors: string[];
  repository?: string;
  /** Path of the transaction directory in the repository. */
  path?: string;
  /** The source commit (40 hex). */
  commit?: string;
  /** Who made the source commit, when the record says. */
  author?: string;
  /** When the event was seen (RFC 3339). */
  time: string;
}

/** What drift-monitor.ts tells (a DriftNotice): a Source's drift found, changed or gone. */
export interface DriftFacts {
  namespace: string;
  source: string;
  news: 'drifted' | 'resolved';
  count: number;
  message: string;
  revision: string;
  checkedAt: string;
}

/** The event of a Source's drift: routed by its namespace like a transaction's; one per check that changed something. */
export function driftEvent(facts: DriftFacts): NotificationEvent {
  const phase = facts.news === 'drifted' ? 'Drifted' : 'DriftResolved';
  return {
    id: `source:${facts.namespace}/${facts.source}/${phase}@${facts.checkedAt}`,
    namespace: facts.namespace,
    name: facts.source,
    phase,
    severity: PHASE_SEVERITY[phase],
    reason: oneLine(facts.message || phase, MAX_REASON_CHARS),
    changes: facts.count,
    errors: [],
    ...(/^[0-9a-f]{40}$/.test(facts.revision) && { commit: facts.revision }),
    time: facts.checkedAt,
  };
}

/** File errors carried by a rejection's event; the results branch has them all. */
export const MAX_EVENT_ERRORS = 5;
/** A reason longer than this is cut (a condition message may be 32 KiB). */
export const MAX_REASON_CHARS = 300;

/** The event a result record describes; undefined for a record that notifies nothing. */
export function eventFromRecord(record: ResultRecord, time: Date): NotificationEvent | undefined {
  const text = Object.values(record.files)[0];
  if (text === undefined) return undefined; // a notice (edit ignored): nothing happened
  const doc = asObject(parseYamlValue(text));
  const phase = String(doc.phase ?? '');
  if (!isNotifiedPhase(phase)) return undefined;
  const transaction = asObject(doc.transaction);
  const source = asObject(doc.source);
  const namespace = String(transaction.namespace ?? '');
  const name = String(transaction.name ?? '');
  const uid = typeof transaction.uid === 'string' ? transaction.uid : undefined;
  const commit = sourceCommit(typeof source.revision === 'string' ? source.revision : undefined);
  const changes = Array.isArray(doc.changes) ? doc.changes.length : 0;
  const errors = (Array.isArray(doc.errors) ? doc.errors : []).map(asObject);
  return {
    id: uid ? `${uid}/${phase}` : `${namespace}/${name}@${commit ?? 'unknown'}/${phase}`,
    namespace,
    name,
    ...(uid && { uid }),
    phase,
    severity: PHASE_SEVERITY[phase],
    reason: oneLine(String(doc.message ?? phase), MAX_REASON_CHARS),
    changes,
    ...(typeof doc.progress === 'string' && { progress: doc.progress }),
    errors: errors.slice(0, MAX_EVENT_ERRORS).map(describeError),
    ...(typeof source.repository === 'string' && { repository: source.repository }),
    ...(typeof source.path === 'string' && { path: source.path }),
    ...(commit && { commit }),
    ...(typeof source.author === 'string' && { author: source.author }),
    time: time.toISOString(),
  };
}

function describeError(e: Record<string, unknown>): string {
  const where = [e.file, e.line].filter((part) => part !== undefined).join(':');
  return oneLine(`${where}: ${String(e.message ?? e.code ?? '')}`, MAX_REASON_CHARS);
}

function asObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/**
 * The event with every string others wrote (a name, a reason, errors, a path, an author) made
 * printable: no control character, and none of the invisible ones that reorder or hide text in a
 * chat line (bidi controls, zero-width characters). What each provider escapes besides is its own.
 */
export function printableEvent(event: NotificationEvent): NotificationEvent {
  const text = (value: string) => printable(value);
  return {
    ...event,
    namespace: text(event.namespace),
    name: text(event.name),
    reason: text(event.reason),
    errors: event.errors.map(text),
    ...(event.path !== undefined && { path: text(event.path) }),
    ...(event.author !== undefined && { author: text(event.author) }),
    ...(event.repository !== undefined && { repository: text(event.repository) }),
  };
}

/** Collapses whitespace and cuts: a chat line must not be a page. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

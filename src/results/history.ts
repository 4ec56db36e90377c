/**
 * The history of outcomes, read back from the results branch's commits: one entry per commit
 * whose trailers name a transaction (subject `<ns>/<name>: <phase> (<detail>)`, trailers
 * Janus-Transaction, Janus-Phase, Janus-Source). What `janus history` shows, as `argocd app
 * history` does; it needs nothing but the branch, so it outlives every pruned Transaction.
 */

import type { CommitInfo } from '../git/commit-info.ts';
import type { GitSession } from '../git/repository.ts';
import { printable } from '../text/printable.ts';
import {
  parseTrailers,
  TRAILER_PHASE,
  TRAILER_SOURCE,
  TRAILER_SOURCE_NAME,
  TRAILER_TRANSACTION,
} from './commit-message.ts';

export interface HistoryEntry {
  /** The results-branch commit that records it (`git show <record>`). */
  record: string;
  /** When it was recorded (the commit's committer time), RFC 3339 in UTC. */
  recordedAt: string;
  /** `<namespace>/<name>` */
  transaction: string;
  /** A Transaction phase (Committed, RolledBack, Failed, RollingBack, ...), or Rejected, Ignored. */
  phase: string;
  /** What the subject says after the phase, e.g. `3/3 changes`. */
  detail?: string;
  /** The source commit on the watched branch, when known. */
  source?: string;
  /** A source's commit: the Source, `<namespace>/<name>` (docs/sources.md). */
  sourceName?: string;
}

/** The entry a results commit makes, or undefined when it records no transaction (a baseline, a merge). */
export function historyEntryOf(commit: CommitInfo): HistoryEntry | undefined {
  // Anyone who may push to the results branch writes these messages: nothing of them reaches a
  // terminal as a control sequence.
  const message = printable(commit.message);
  const trailers = parseTrailers(message);
  const transaction = trailers[TRAILER_TRANSACTION];
  const phase = trailers[TRAILER_PHASE];
  if (!transaction || !phase) return undefined;
  const detail = detailOf(message.split('\n', 1)[0] ?? '', transaction, phase);
  const source = trailers[TRAILER_SOURCE];
  const sourceName = trailers[TRAILER_SOURCE_NAME];
  return {
    record: commit.oid,
    recordedAt: new Date(commit.committer.timestamp * 1000).toISOString().replace('.000Z', 'Z'),
    transaction,
    phase,
    ...(detail && { detail }),
    ...(source && { source }),
    ...(sourceName && { sourceName }),
  };
}

/** "shop/web: Committed (3/3 changes)" → "3/3 changes"; "shop/web: edit ignored (…)" → "edit ignored (…)". */
function detailOf(subject: string, transaction: string, phase: string): string | undefined {
  const rest = subject.startsWith(`${transaction}: `) ? subject.slice(transaction.length + 2) : subject;
  const afterPhase = rest.startsWith(`${phase} `) ? rest.slice(phase.length + 1) : undefined;
  const inParentheses = afterPhase && /^\((.*)\)$/.exec(afterPhase.trim())?.[1];
  return inParentheses || (rest === phase ? '' : rest) || undefined;
}

/**
 * `name` matches `<namespace>/<name>` exactly, or `<name>` in any namespace; undefined matches
 * every transaction.
 */
export function matchesTransaction(entry: HistoryEntry, name: string | undefined): boolean {
  return matchesName(entry.transaction, name);
}

/** `[namespace/]name` matches `<namespace>/<name>` exactly, or `<name>` in any namespace; undefined matches all. */
function matchesName(full: string | undefined, name: string | undefined): boolean {
  if (name === undefined) return true;
  if (full === undefined) return false;
  return name.includes('/') ? full === name : full.endsWith(`/${name}`);
}

export interface HistoryOptions {
  /** See matchesTransaction. */
  transaction?: string | undefined;
  /** Only the transactions of this namespace. */
  namespace?: string | undefined;
  /** Only the records of this Source's commits, matched as a transaction name is. */
  source?: string | undefined;
  /** Most entries to return: the newest ones. */
  limit: number;
  /** Most commits to walk (a guard for huge branches). Default 100,000. */
  maxCommits?: number;
}

export interface History {
  /** The branch's tip, or undefined when the branch does not exist. */
  tip: string | undefined;
  /** Newest first. */
  entries: HistoryEntry[];
  /** True when older entries exist beyond `limit` (or beyond `maxCommits`). */
  more: boolean;
}

/** How many more commits to fetch at a time when a shallow cache runs out of history. */
const DEEPEN_BY = 500;

/**
 * Walks the results branch from `tip`, first parent only (the writer never merges), newest first,
 * deepening a shallow cache as it goes.
 */
export async function readHistory(
  session: GitSession,
  branch: string,
  tip: string | undefined,
  options: HistoryOptions,
): Promise<History> {
  const entries: HistoryEntry[] = [];
  const maxCommits = options.maxCommits ?? 100_000;
  let oid = tip;
  let walked = 0;
  while (oid !== undefined) {
    if (walked++ >= maxCommits) return { tip, entries, more: true };
    let commit = await session.store.findCommit(oid);
    if (!commit && (await session.deepen(branch, DEEPEN_BY))) commit = await session.store.findCommit(oid);
    if (!commit) break;
    const entry = historyEntryOf(commit);
    if (
      entry &&
      matchesTransaction(entry, options.transaction) &&
      (options.namespace === undefined || entry.transaction.startsWith(`${options.namespace}/`)) &&
      matchesName(entry.sourceName, options.source)
    ) {
      if (entries.length === options.limit) return { tip, entries, more: true };
      entries.push(entry);
    }
    oid = commit.parents[0];
  }
  return { tip, entries, more: false };
}

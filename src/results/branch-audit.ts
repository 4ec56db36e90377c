/**
 * `janus history --verify` over the whole results branch: every commit reachable from its tip,
 * through every parent, checked as `git verify-commit` checks it, not only those that look like
 * records. Anyone who may push the branch can add a commit without trailers that rewrites a
 * result file; Janus's next record is then made on top of it and carries its files, so a check of
 * the records alone would call such a branch verified.
 */

import type { AllowedSigners } from '../git/allowed-signers.ts';
import { findSignedCommit, type SignedCommit } from '../git/commit-signature.ts';
import { GitObjectTooLargeError } from '../git/input-limits.ts';
import type { GitSession } from '../git/repository.ts';
import { markCommit, type RecordSignature, TOO_LARGE } from './record-signature.ts';

/** Most commits one audit walks; past it the audit says it is incomplete. */
export const MAX_AUDITED_COMMITS = 100_000;
/** Commits fetched at a time when a shallow cache runs out of history. */
const DEEPEN_BY = 2_000;
/** Unverified commits the audit names; the rest are counted. */
export const MAX_LISTED_UNVERIFIED = 20;

export interface UnverifiedCommit {
  commit: string;
  signature: RecordSignature;
}

export interface BranchAudit {
  /** Commits checked. */
  checked: number;
  /** How many of them are not verified. */
  unverifiedCount: number;
  /** The first MAX_LISTED_UNVERIFIED of them, in the order met from the tip (first parents first). */
  unverified: UnverifiedCommit[];
  /** Why the walk stopped before the branch's root (or `after`), when it did. */
  incomplete?: string;
  /** `after` was given and never met: every commit down to the root was checked. */
  afterNotFound?: boolean;
}

export interface AuditOptions {
  /** A commit (its id or a prefix of at least 7 hex digits) whose ancestors are not checked, nor itself. */
  after?: string | undefined;
  maxCommits?: number;
  now?: number;
}

/** Walks every commit reachable from `tip` (all parents), newest first, each checked against `allowed`. */
export async function auditBranch(
  session: GitSession,
  branch: string,
  tip: string,
  allowed: AllowedSigners,
  options: AuditOptions = {},
): Promise<BranchAudit> {
  const maxCommits = options.maxCommits ?? MAX_AUDITED_COMMITS;
  const now = options.now ?? Date.now();
  const after = options.after?.toLowerCase();
  const audit: BranchAudit = { checked: 0, unverifiedCount: 0, unverified: [] };
  const seen = new Set<string>([tip]);
  // A stack, first parent on top: a linear branch is walked from its tip down, in order.
  const pending = [tip];
  let metAfter = false;
  for (let oid = pending.pop(); oid !== undefined; oid = pending.pop()) {
    if (after !== undefined && oid.startsWith(after)) {
      metAfter = true;
      continue;
    }
    if (audit.checked >= maxCommits) {
      audit.incomplete = `more than ${maxCommits.toLocaleString('en-US')} commits: older ones were not checked (--verify-after)`;
      break;
    }
    const read = await readCommit(session, branch, oid);
    if (read === 'missing') {
      note(audit, oid, { status: 'bad signature', detail: 'not in the repository: cannot be verified' });
      audit.incomplete = `commit ${oid} is missing: its ancestors were not checked`;
      continue;
    }
    audit.checked++;
    const signature = read === 'too-large' ? TOO_LARGE : markCommit(read, allowed, now);
    if (signature.status !== 'verified') note(audit, oid, signature);
    const parents = read === 'too-large' ? await parentsOf(session, oid) : read.parents;
    if (parents === undefined) {
      audit.incomplete = `commit ${oid} could not be read: its ancestors were not checked`;
      continue;
    }
    for (const parent of [...parents].reverse()) {
      if (seen.has(parent)) continue;
      seen.add(parent);
      pending.push(parent);
    }
  }
  if (after !== undefined && !metAfter && audit.incomplete === undefined) audit.afterNotFound = true;
  return audit;
}

function note(audit: BranchAudit, commit: string, signature: RecordSignature): void {
  audit.unverifiedCount++;
  if (audit.unverified.length < MAX_LISTED_UNVERIFIED) audit.unverified.push({ commit, signature });
}

/** Commit `oid` for verification, deepening a shallow cache once when the store lacks it. */
async function readCommit(
  session: GitSession,
  branch: string,
  oid: string,
): Promise<SignedCommit | 'missing' | 'too-large'> {
  try {
    const commit = await findSignedCommit(session.store, oid);
    if (commit) return commit;
    if (!(await session.deepen(branch, DEEPEN_BY))) return 'missing';
    return (await findSignedCommit(session.store, oid)) ?? 'missing';
  } catch (error) {
    if (error instanceof GitObjectTooLargeError) return 'too-large';
    throw error;
  }
}

/** A huge commit's parents, from its first bytes; undefined when even that cannot be read (a delta). */
async function parentsOf(session: GitSession, oid: string): Promise<string[] | undefined> {
  try {
    return (await session.store.readCommit(oid)).parents;
  } catch (error) {
    if (error instanceof GitObjectTooLargeError) return undefined;
    throw error;
  }
}

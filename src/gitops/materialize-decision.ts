/**
 * What to do with one changed transaction directory, from what Git shows and what the results
 * branch records about it. Pure: the materializer gathers the facts and carries out the actions.
 *
 * The recorded outcome decides, not the kind of change Git reports: a directory with an outcome
 * on the results branch is never applied again, however it reappears (a re-processed commit,
 * a force-push, a lost cursor). Only a directory that was rejected, or never seen, is applied.
 */
import { isPhase, leavesWork, verdictIn } from '../api/requests.ts';
import type { Transaction } from '../api/v1alpha1/index.ts';
import type { DirectoryChangeKind } from '../git/changes.ts';
import { PHASE_REJECTED } from '../results/render-directory.ts';
import type { RecordedOutcome } from '../results/results-reader.ts';
import { ROLLBACK_FILE } from './file-names.ts';
import type { ParseResult, RollbackRequest } from './parse-directory.ts';
import type { DirectorySignatures } from './signature-gate.ts';

/** The result-file phase of a directory recorded without being applied (first run). */
export const PHASE_BASELINE = 'Baseline';

export interface DirectoryFacts {
  /** Repository-relative path, e.g. "transactions/deploy-v2". */
  path: string;
  /** The directory name: the Transaction's name. */
  name: string;
  kind: DirectoryChangeKind;
  /** The commit (40 hex) in which Git shows this change. */
  commit: string;
  /** The directory as of `commit`; undefined when it was removed. Deciding needs only its metadata. */
  parsed: ParseResult<Pick<Transaction, 'metadata'>> | undefined;
  /**
   * The namespace its outcome is recorded under: from the previous version of transaction.yaml
   * for an edited directory (an edit cannot move a transaction), else from the current one.
   */
  namespace: string;
  /** Names of the files that differ from the previous version of the directory, sorted. */
  changedFiles: string[];
  /** ROLLBACK is there now and was not before (for a directory seen for the first time: is there). */
  rollbackAdded: boolean;
  /** With --verify-signatures: whether the commits that made the directory are signed by allowed signers. */
  signatures?: DirectorySignatures;
}

export type NoticeKind =
  /** ROLLBACK in a directory that was never applied: it is not applied either. */
  | 'rollback-before-apply'
  /** ROLLBACK in a directory recorded as baseline: Janus never applied it. */
  | 'rollback-of-baseline'
  /** ROLLBACK in a directory that is invalid or outside the repository's policy as it stands. */
  | 'rollback-outside-policy'
  /** ROLLBACK in a directory whose record names no Transaction uid: nothing says which one it created. */
  | 'rollback-unknown-uid'
  /** --verify-signatures: a commit since ROLLBACK appeared is not signed by an allowed signer. */
  | 'rollback-unsigned';

export type DirectoryAction =
  | { do: 'materialize' }
  | { do: 'reject' }
  | { do: 'ignore-edit'; files: string[] }
  /** Only of the Transaction of this uid, created from this directory (checked against the cluster). */
  | { do: 'request-rollback'; reason: string; file: string; uid: string }
  | { do: 'notice'; notice: NoticeKind };

const UNAPPLIED = new Set([PHASE_REJECTED]);
/**
 * Whether a rollback request still has something to act on in a recorded phase, as the requests
 * table says for a ROLLBACK file; an unreadable record ('Unknown') may be anything, so it may.
 */
function rollbackTakes(recordedPhase: string): boolean {
  if (!isPhase(recordedPhase)) return recordedPhase === 'Unknown';
  return leavesWork(verdictIn('rollback', recordedPhase), true);
}

/** The actions for one directory change, in order; empty when nothing is to be done. */
export function decideDirectory(
  facts: DirectoryFacts,
  recorded: RecordedOutcome | undefined,
): DirectoryAction[] {
  if (facts.kind === 'removed' || facts.parsed === undefined) return [];
  if (recorded === undefined || UNAPPLIED.has(recorded.phase))
    return decideUnapplied(facts.parsed, facts.signatures);
  const firstSight = facts.kind === 'added';
  if (recorded.phase === PHASE_BASELINE) {
    if (facts.rollbackAdded && !firstSight) return [{ do: 'notice', notice: 'rollback-of-baseline' }];
    return firstSight ? [] : [{ do: 'ignore-edit', files: facts.changedFiles }];
  }
  const actions: DirectoryAction[] = [];
  const rollback = facts.parsed.rollback;
  // Seen again without an edit (a re-processed commit, a lost cursor): a ROLLBACK file still asks
  // for a rollback only while there is something to roll back, so nothing is undone twice.
  const wantsRollback =
    rollback !== undefined && facts.rollbackAdded && (!firstSight || rollbackTakes(recorded.phase));
  if (wantsRollback) actions.push(rollbackAction(facts, recorded, rollback));
  if (!firstSight) {
    const edited = facts.changedFiles.filter((f) => !(wantsRollback && f === ROLLBACK_FILE));
    if (edited.length > 0) actions.push({ do: 'ignore-edit', files: edited });
  }
  return actions;
}

/**
 * A results record alone never authorizes an act (anyone who may push the results branch can
 * write one): the directory must pass the repository's policy as it stands, in the namespace its
 * outcome is recorded under, and the record must name the uid of the Transaction it created, so
 * that a namesake created since (retention freed the name) is never the one rolled back.
 */
function rollbackAction(
  facts: DirectoryFacts,
  recorded: RecordedOutcome,
  rollback: RollbackRequest,
): DirectoryAction {
  const parsed = facts.parsed;
  if (!parsed?.ok || parsed.transaction.metadata.namespace !== facts.namespace)
    return { do: 'notice', notice: 'rollback-outside-policy' };
  if (recorded.uid === undefined) return { do: 'notice', notice: 'rollback-unknown-uid' };
  if (facts.signatures?.ok === false) return { do: 'notice', notice: 'rollback-unsigned' };
  return { do: 'request-rollback', reason: rollback.reason, file: rollback.file, uid: recorded.uid };
}

function decideUnapplied(
  parsed: NonNullable<DirectoryFacts['parsed']>,
  signatures: DirectorySignatures | undefined,
): DirectoryAction[] {
  if (!parsed.ok || signatures?.ok === false) return [{ do: 'reject' }];
  if (parsed.rollback) return [{ do: 'notice', notice: 'rollback-before-apply' }];
  return [{ do: 'materialize' }];
}

/**
 * The outcome the results branch will hold after `action`, for decisions later in the same poll;
 * `uid` is that of the Transaction a materialization created.
 */
export function outcomeAfter(
  action: DirectoryAction,
  facts: DirectoryFacts,
  uid?: string,
): RecordedOutcome | undefined {
  if (action.do === 'materialize') return { phase: 'Pending', path: facts.path, ...(uid && { uid }) };
  if (action.do === 'reject') return { phase: PHASE_REJECTED, path: facts.path };
  return undefined;
}

/**
 * Results-branch records the materializer writes itself: the baseline of a first run, and
 * notices for ROLLBACK files that cannot act. Outcomes of Transactions are the reporter's.
 */
import { stringify } from 'yaml';
import type { TransactionSource } from '../api/v1alpha1/index.ts';
import { formatCommitMessage } from '../results/commit-message.ts';
import { type DirectoryRef, PHASE_IGNORED, renderRejection } from '../results/render-directory.ts';
import {
  RESULT_API_VERSION,
  type ResultContext,
  renderSource,
  sourceCommit,
} from '../results/result-context.ts';
import type { ResultRecord } from '../results/result-record.ts';
import { BASELINE_FILE, BASELINE_KIND } from '../results/results-reader.ts';
import { formatDiagnostic } from '../yaml/diagnostic.ts';
import { TRANSACTION_FILE } from './file-names.ts';
import { type DirectoryFacts, type NoticeKind, PHASE_BASELINE } from './materialize-decision.ts';
import { signatureDiagnostic } from './signature-gate.ts';

/** Directories named in a baseline commit's body; the file lists them all. */
const BODY_DIRECTORIES = 50;

/**
 * One commit recording every directory present at the first run as baseline: seen, never
 * applied, and never applied later (an edit is reported as ignored). One file lists them all,
 * so a first run on a repository of thousands of directories writes one small commit.
 */
export function renderBaseline(
  paths: readonly string[],
  source: Pick<TransactionSource, 'repository' | 'revision'>,
  context: ResultContext,
  option = '--initial=baseline',
): ResultRecord {
  const document = {
    apiVersion: RESULT_API_VERSION,
    kind: BASELINE_KIND,
    message:
      `these directories existed before Janus watched this repository; they were recorded without ` +
      `being applied (${option}) and are never applied`,
    source: renderSource(source),
    directories: [...paths],
    recordedBy: { controller: `janus ${context.controllerVersion}`, identity: context.identity },
  };
  const shown = paths.slice(0, BODY_DIRECTORIES);
  if (paths.length > shown.length) shown.push(`… and ${paths.length - shown.length} more`);
  const count = `${paths.length} existing ${paths.length === 1 ? 'directory' : 'directories'}`;
  const commit = sourceCommit(source.revision);
  return {
    files: { [BASELINE_FILE]: stringify(document, { lineWidth: 0 }) },
    message: formatCommitMessage(
      `Baseline: ${count} recorded, none applied`,
      [
        `First run on this repository (${option}): every transaction directory already present is ` +
          `recorded in ${BASELINE_FILE} and will not be applied. Directories added from now on are applied.`,
        shown.join('\n'),
      ],
      { transaction: '*', phase: PHASE_BASELINE, ...(commit && { source: commit }) },
    ),
  };
}

/** Why a ROLLBACK file did not lead to a rollback. */
export type RollbackRefusal =
  | { kind: 'not-applied' }
  | { kind: 'baseline' }
  | { kind: 'gone' }
  | { kind: 'phase'; phase: string }
  /** The directory is invalid or outside the repository's policy as it stands. */
  | { kind: 'policy'; problems: string[] }
  /** The results record names no Transaction uid. */
  | { kind: 'unknown-uid' }
  /** --verify-signatures: a commit since ROLLBACK appeared is not signed by an allowed signer. */
  | { kind: 'unsigned'; problem: string }
  /** The Transaction of that name is not the one this directory created. */
  | { kind: 'not-created-here'; uid: string; recordedUid: string; origin: string };

/** Problems quoted in a `policy` notice; the rest are counted. */
const QUOTED_PROBLEMS = 5;

/** Why a notice's ROLLBACK file does not act. */
export function noticeRefusal(notice: NoticeKind, fact: DirectoryFacts): RollbackRefusal {
  switch (notice) {
    case 'rollback-of-baseline':
      return { kind: 'baseline' };
    case 'rollback-before-apply':
      return { kind: 'not-applied' };
    case 'rollback-unknown-uid':
      return { kind: 'unknown-uid' };
    case 'rollback-unsigned': {
      const signatures = fact.signatures;
      const problem =
        signatures && !signatures.ok ? formatDiagnostic(signatureDiagnostic(fact.path, signatures)) : '';
      return { kind: 'unsigned', problem };
    }
    case 'rollback-outside-policy': {
      const parsed = fact.parsed;
      const problems =
        parsed && !parsed.ok
          ? parsed.diagnostics.map(formatDiagnostic)
          : [
              `transaction.yaml now names namespace ${parsed?.namespace}; its Transaction lives in ${fact.namespace}`,
            ];
      return { kind: 'policy', problems };
    }
  }
}

/** A notice (no file changes): a ROLLBACK file was seen and could not act. */
export function renderRollbackRefusal(dir: DirectoryRef, refusal: RollbackRefusal): ResultRecord {
  const id = `${dir.namespace}/${dir.name}`;
  const at = dir.source.path ?? dir.name;
  const commit = sourceCommit(dir.source.revision);
  const { subject, body } = describeRefusal(refusal, at, id);
  return {
    files: {},
    message: formatCommitMessage(`${id}: ${subject}`, [body], {
      transaction: id,
      phase: PHASE_IGNORED,
      ...(commit && { source: commit }),
    }),
  };
}

function describeRefusal(
  refusal: RollbackRefusal,
  at: string,
  id: string,
): { subject: string; body: string } {
  switch (refusal.kind) {
    case 'not-applied':
      return {
        subject: 'not applied (holds a ROLLBACK file)',
        body: `${at} has a ROLLBACK file but was never applied, so it is not applied now. Remove ROLLBACK to apply it.`,
      };
    case 'baseline':
      return {
        subject: 'rollback ignored (baseline, never applied)',
        body: `${at} was recorded as baseline at the first run; Janus never applied it, so there is nothing to roll back.`,
      };
    case 'gone':
      return {
        subject: 'rollback ignored (Transaction not found)',
        body: `A ROLLBACK file was added to ${at}, but the Transaction ${id} no longer exists in the cluster.`,
      };
    case 'phase':
      return {
        subject: `rollback ignored (${refusal.phase})`,
        body: `A ROLLBACK file was added to ${at}, but the Transaction is ${refusal.phase}: there is nothing left to roll back.`,
      };
    case 'policy': {
      const shown = refusal.problems.slice(0, QUOTED_PROBLEMS);
      const more = refusal.problems.length - shown.length;
      return {
        subject: 'rollback refused (outside the policy)',
        body:
          `A ROLLBACK file was added to ${at}, but the directory as it stands is not one this repository ` +
          `may apply in namespace ${id.split('/')[0]}, so it may not roll back ${id} either; nothing was requested.\n` +
          [...shown, ...(more > 0 ? [`… and ${more} more`] : [])].join('\n'),
      };
    }
    case 'unknown-uid':
      return {
        subject: 'rollback refused (no recorded uid)',
        body: `A ROLLBACK file was added to ${at}, but the results branch does not say which Transaction (uid) this directory created, so none is rolled back.`,
      };
    case 'unsigned':
      return {
        subject: 'rollback refused (commit signature)',
        body: `A ROLLBACK file was added to ${at}, but not every commit since is signed by an allowed signer, so nothing was requested.\n${refusal.problem}`,
      };
    case 'not-created-here':
      return {
        subject: 'rollback refused (not created here)',
        body:
          `A ROLLBACK file was added to ${at}, but the Transaction ${id} in the cluster (uid ${refusal.uid || 'unknown'}, ` +
          `from ${refusal.origin}) is not the one this directory created (uid ${refusal.recordedUid}): ` +
          'it is left alone.',
      };
  }
}

/**
 * A directory the parser accepted but the API server refused (a rule only it knows, a missing
 * namespace, a name taken by another Transaction): a rejection, pointing at transaction.yaml.
 */
export function renderClusterRefusal(
  dir: DirectoryRef,
  refusal: { field?: string; message: string },
  context: ResultContext,
): ResultRecord {
  const file = `${dir.source.path ?? dir.name}/${TRANSACTION_FILE}`;
  return renderRejection(
    dir,
    [
      {
        code: 'invalid-value',
        file,
        ...(refusal.field && { field: refusal.field }),
        message: refusal.message,
      },
    ],
    context,
  );
}

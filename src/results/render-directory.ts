/**
 * Results for directories that did not (or no longer) become a Transaction: a rejected directory,
 * with every diagnostic, and an edit made after materialization, which is ignored.
 */
import { stringify } from 'yaml';
import type { TransactionSource } from '../api/v1alpha1/index.ts';
import { type Diagnostic, formatDiagnostic } from '../yaml/diagnostic.ts';
import { formatCommitMessage } from './commit-message.ts';
import {
  RESULT_API_VERSION,
  RESULT_KIND,
  type ResultContext,
  renderSource,
  resultPath,
  sourceCommit,
} from './result-context.ts';
import type { ResultRecord } from './result-record.ts';

export const PHASE_REJECTED = 'Rejected';
export const PHASE_IGNORED = 'Ignored';
/** A source's commit whose render failed (src/sources/source-records.ts): nothing applied. */
export const PHASE_RENDER_FAILED = 'RenderFailed';
/** A source's commit whose render the policy or a bound refused: nothing applied. */
export const PHASE_REFUSED = 'Refused';
/** A source's commit a newer one was applied instead of. */
export const PHASE_SUPERSEDED = 'Superseded';

export interface DirectoryRef {
  /** The namespace the Transaction would live in (from transaction.yaml, else the default). */
  namespace: string;
  /**
   * A rejection filed under the controller's namespace as the repository's own: the namespace the
   * directory named (or defaulted to), which the repository may not use.
   */
  refusedNamespace?: string;
  /** The directory name. */
  name: string;
  source: TransactionSource;
}

/** Diagnostics listed in a commit body; the file lists them all. */
const BODY_DIAGNOSTICS = 20;

export function renderRejection(
  dir: DirectoryRef,
  diagnostics: readonly Diagnostic[],
  context: ResultContext,
): ResultRecord {
  const id = `${dir.namespace}/${dir.name}`;
  const document = {
    apiVersion: RESULT_API_VERSION,
    kind: RESULT_KIND,
    transaction: { namespace: dir.namespace, name: dir.name },
    phase: PHASE_REJECTED,
    message: rejectionMessage(diagnostics, dir),
    source: renderSource(dir.source),
    errors: diagnostics.map((d) => ({
      file: d.file,
      ...(d.document !== undefined && { document: d.document }),
      ...(d.line !== undefined && { line: d.line }),
      ...(d.column !== undefined && { column: d.column }),
      ...(d.field !== undefined && { field: d.field }),
      code: d.code,
      message: d.message,
    })),
    recordedBy: { controller: `janus ${context.controllerVersion}`, identity: context.identity },
  };
  const shown = diagnostics.slice(0, BODY_DIAGNOSTICS).map(formatDiagnostic);
  if (diagnostics.length > shown.length) shown.push(`… and ${diagnostics.length - shown.length} more`);
  const count = `${diagnostics.length} ${diagnostics.length === 1 ? 'error' : 'errors'}`;
  const commit = sourceCommit(dir.source.revision);
  return {
    files: { [resultPath(dir.namespace, dir.name)]: stringify(document, { lineWidth: 0 }) },
    message: formatCommitMessage(
      `${id}: ${PHASE_REJECTED} (${count})`,
      [repositoryNote(dir), shown.join('\n')],
      {
        transaction: id,
        phase: PHASE_REJECTED,
        ...(commit && { source: commit }),
      },
    ),
  };
}

/** Why nothing was applied, in one line: the directory's content, its commits' signatures, or both. */
function rejectionMessage(diagnostics: readonly Diagnostic[], dir: DirectoryRef): string {
  const unsigned = diagnostics.some((d) => d.code === 'commit-signature');
  const invalid = diagnostics.some((d) => d.code !== 'commit-signature');
  const why =
    unsigned && !invalid
      ? 'a commit that made the directory is not signed by an allowed signer; nothing was applied'
      : unsigned
        ? 'the directory is invalid, and not signed by an allowed signer; nothing was applied'
        : 'the directory is invalid; nothing was applied';
  return dir.refusedNamespace === undefined
    ? why
    : `${why} (recorded as the repository's: its namespace ${dir.refusedNamespace} is one this repository may not use)`;
}

/** The commit body's first paragraph for a rejection filed as the repository's; '' otherwise. */
function repositoryNote(dir: DirectoryRef): string {
  if (dir.refusedNamespace === undefined) return '';
  return (
    `The namespace of ${dir.source.path ?? dir.name}, ${dir.refusedNamespace}, is one this repository may not ` +
    `use: the rejection is recorded as the repository's, under the controller's namespace ${dir.namespace}.`
  );
}

/**
 * A notice, not a file change: the directory's result file keeps describing what was applied,
 * and `git log` shows that a later edit was seen and ignored.
 */
export function renderIgnoredEdit(dir: DirectoryRef, changedFiles: readonly string[] = []): ResultRecord {
  const id = `${dir.namespace}/${dir.name}`;
  const commit = sourceCommit(dir.source.revision);
  const body = [
    `${dir.source.path ?? dir.name} changed${commit ? ` in ${commit}` : ''} after it was materialized. ` +
      'A transaction directory is applied once; nothing changed in the cluster. ' +
      'To change more, add a new directory; to undo this one, add a ROLLBACK file.',
    changedFiles.length > 0 ? `Changed files:\n${changedFiles.map((f) => `  ${f}`).join('\n')}` : '',
  ];
  return {
    files: {},
    message: formatCommitMessage(`${id}: edit ignored (already materialized)`, body, {
      transaction: id,
      phase: PHASE_IGNORED,
      ...(commit && { source: commit }),
    }),
  };
}

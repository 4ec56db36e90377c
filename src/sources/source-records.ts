/**
 * Results-branch records of a source's commits that became no Transaction (docs/sources.md): a
 * declaration with problems (Rejected), a render that failed (RenderFailed: the tool, its message,
 * file and line), a render the policy or a bound refused (Refused, naming each object), and a
 * commit a newer one superseded (Superseded). Each is `results/<namespace>/<source>-<7 hex>.yaml`,
 * the file the commit's transaction would have had, so `janus history` and the commit statuses
 * read them like any other. A source's transactions are recorded by the results reporter. Pure.
 */
import { stringify } from 'yaml';
import type { RenderFailure } from '../render/types.ts';
import { formatCommitMessage } from '../results/commit-message.ts';
import {
  type DirectoryRef,
  PHASE_REFUSED,
  PHASE_RENDER_FAILED,
  PHASE_SUPERSEDED,
  renderRejection,
} from '../results/render-directory.ts';
import {
  RESULT_API_VERSION,
  RESULT_KIND,
  type ResultContext,
  renderSource,
  resultPath,
} from '../results/result-context.ts';
import type { ResultRecord } from '../results/result-record.ts';
import { type Diagnostic, formatDiagnostic } from '../yaml/diagnostic.ts';

/** One commit of one source, as its records name it. */
export interface SourceCommitRef {
  namespace: string;
  /** The source's name. */
  source: string;
  /** The name its transaction has or would have had: the record's file. */
  name: string;
  /** The source's file, repository-relative. */
  file: string;
  repository: string;
  branch: string;
  commit: string;
}

function directoryOf(ref: SourceCommitRef, refusedNamespace?: string): DirectoryRef {
  return {
    namespace: ref.namespace,
    name: ref.name,
    ...(refusedNamespace !== undefined && { refusedNamespace }),
    source: { repository: ref.repository, revision: `${ref.branch}@sha1:${ref.commit}`, path: ref.file },
  };
}

/** A declaration with problems: rejected like a transaction directory, every diagnostic listed. */
export function renderDeclarationRejection(
  ref: SourceCommitRef,
  diagnostics: readonly Diagnostic[],
  context: ResultContext,
  refusedNamespace?: string,
): ResultRecord {
  return renderRejection(directoryOf(ref, refusedNamespace), diagnostics, context);
}

/** The diagnostic a failed render is (for records, `janus validate` and the status's reason). */
export function renderDiagnostic(failure: RenderFailure, fallbackFile: string): Diagnostic {
  return {
    code: 'render-failed',
    file: failure.file ?? fallbackFile,
    ...(failure.line !== undefined && { line: failure.line }),
    message: `${failure.tool}${failure.bound ? ` (bound: ${failure.bound})` : ''}: ${failure.message}`,
  };
}

export function renderRenderFailure(
  ref: SourceCommitRef,
  failure: RenderFailure,
  context: ResultContext,
): ResultRecord {
  const diagnostic = renderDiagnostic(failure, ref.file);
  return sourceRecord(ref, context, {
    phase: PHASE_RENDER_FAILED,
    message: `the render failed (${failure.tool}); nothing was applied`,
    render: {
      tool: failure.tool,
      ...(failure.file !== undefined && { file: failure.file }),
      ...(failure.line !== undefined && { line: failure.line }),
      ...(failure.bound !== undefined && { bound: failure.bound }),
    },
    errors: [diagnostic],
    subject: `${PHASE_RENDER_FAILED} (${failure.tool})`,
  });
}

/** One object (or the render as a whole) the policy or a bound refused. */
export interface Refusal {
  /** "<apiVersion> <kind> <namespace>/<name>", when the refusal is about one object. */
  object?: string;
  message: string;
}

export function renderRefusal(
  ref: SourceCommitRef,
  refusals: readonly Refusal[],
  more: number,
  context: ResultContext,
): ResultRecord {
  const errors: Diagnostic[] = refusals.map((r) => ({
    code: 'object-not-allowed',
    file: ref.file,
    message: r.message,
  }));
  if (more > 0)
    errors.push({
      code: 'object-not-allowed',
      file: ref.file,
      message: `… and ${more} more objects refused`,
    });
  const count = refusals.length + more;
  return sourceRecord(ref, context, {
    phase: PHASE_REFUSED,
    message: 'the render was refused; nothing was applied',
    errors,
    subject: `${PHASE_REFUSED} (${count} ${count === 1 ? 'problem' : 'problems'})`,
  });
}

/** A commit not applied on its own: a newer one (`by`) was applied with its changes in it. */
export function renderSuperseded(ref: SourceCommitRef, by: string, context: ResultContext): ResultRecord {
  return sourceRecord(ref, context, {
    phase: PHASE_SUPERSEDED,
    message: `superseded by ${by}: a newer commit of the branch was rendered and applied instead, with this one's changes in it`,
    supersededBy: by,
    subject: `${PHASE_SUPERSEDED} by ${by.slice(0, 7)}`,
  });
}

/** Diagnostics listed in a commit body; the file lists them all. */
const BODY_ERRORS = 20;

function sourceRecord(
  ref: SourceCommitRef,
  context: ResultContext,
  o: {
    phase: string;
    message: string;
    subject: string;
    render?: Record<string, unknown>;
    errors?: Diagnostic[];
    supersededBy?: string;
  },
): ResultRecord {
  const id = `${ref.namespace}/${ref.name}`;
  const source = { repository: ref.repository, revision: `${ref.branch}@sha1:${ref.commit}`, path: ref.file };
  const document = {
    apiVersion: RESULT_API_VERSION,
    kind: RESULT_KIND,
    transaction: { namespace: ref.namespace, name: ref.name },
    phase: o.phase,
    message: o.message,
    source: renderSource(source),
    render: { source: ref.source, ...o.render },
    ...(o.supersededBy && { supersededBy: o.supersededBy }),
    ...(o.errors && {
      errors: o.errors.map((d) => ({
        file: d.file,
        ...(d.line !== undefined && { line: d.line }),
        code: d.code,
        message: d.message,
      })),
    }),
    recordedBy: { controller: `janus ${context.controllerVersion}`, identity: context.identity },
  };
  const shown = (o.errors ?? []).slice(0, BODY_ERRORS).map(formatDiagnostic);
  if ((o.errors?.length ?? 0) > shown.length)
    shown.push(`… and ${(o.errors?.length ?? 0) - shown.length} more`);
  return {
    files: { [resultPath(ref.namespace, ref.name)]: stringify(document, { lineWidth: 0 }) },
    message: formatCommitMessage(
      `${id}: ${o.subject}`,
      [
        `Source ${ref.namespace}/${ref.source} (${ref.file}) at ${ref.commit}: ${o.message}.`,
        shown.join('\n'),
      ],
      { transaction: id, phase: o.phase, source: ref.commit, sourceName: `${ref.namespace}/${ref.source}` },
    ),
  };
}

/**
 * The commit status a Transaction's source commit should show, from the Transaction as it stands:
 * pending while it runs (the description names the phase, and nothing that changes within one,
 * so a phase is at most one update), success at Committed, failure at RolledBack and Failed; and
 * failure for a directory rejected before it became a Transaction. Pure.
 */
import type { Phase, Transaction } from '../api/v1alpha1/index.ts';
import {
  PHASE_REFUSED,
  PHASE_REJECTED,
  PHASE_RENDER_FAILED,
  PHASE_SUPERSEDED,
} from '../results/render-directory.ts';
import { sourceCommit, sourceOf } from '../results/result-context.ts';
import { summaryCondition } from '../saga/status.ts';

export type StatusState = 'pending' | 'success' | 'failure';

/** What one commit should show for one transaction directory. */
export interface CommitStatus {
  /** The source commit (40 hex). */
  sha: string;
  /** One per transaction directory, `janus/<namespace>/<name>`, and per source, `janus/<namespace>/<source>`. */
  context: string;
  state: StatusState;
  /** One line, at most DESCRIPTION_MAX characters. */
  description: string;
  targetUrl?: string;
  /** The phase the status was taken at, or what a commit that became no Transaction came to. */
  phase: Phase | RecordPhase;
}

/**
 * What a commit that became no Transaction came to, as its results record says: a rejected
 * directory or source declaration, a source's failed or refused render, a superseded commit.
 */
export const RECORD_PHASES = [PHASE_REJECTED, PHASE_RENDER_FAILED, PHASE_REFUSED, PHASE_SUPERSEDED] as const;
export type RecordPhase = (typeof RECORD_PHASES)[number];

/** GitHub refuses a longer description (its documented limit); Gitea and GitLab take it too. */
export const DESCRIPTION_MAX = 140;

export const CONTEXT_PREFIX = 'janus';

/** What the pending description says in each running phase: fixed words, so it changes only with the phase. */
const RUNNING: Readonly<Partial<Record<Phase, string>>> = {
  Pending: 'materialized, waiting to start',
  Preparing: 'dry runs and locks',
  Prepared: 'prepared, committing next',
  Committing: 'applying the changes',
  Verifying: 'applied; waiting for the targets to be healthy',
  RollingBack: 'rolling back',
};

export interface StatusTemplate {
  /**
   * The link shown with the status; {namespace}, {name}, {sha}, {phase} and {path} are replaced
   * (URL-encoded; {path} keeps its slashes). Undefined: no link.
   */
  targetUrl?: string | undefined;
}

/** The status `txn`'s source commit should show now; undefined when it has no source commit. */
export function statusOfTransaction(
  txn: Transaction,
  template: StatusTemplate = {},
): CommitStatus | undefined {
  const source = sourceOf(txn, { controllerVersion: '', identity: '' });
  const sha = sourceCommit(source.revision);
  if (!sha) return undefined;
  const namespace = txn.metadata.namespace ?? 'default';
  // A source's commits share its context: each commit shows how the source fared there.
  const name = txn.spec.sourceRef?.name ?? txn.metadata.name;
  const phase = txn.status?.phase ?? 'Pending';
  const message = summaryCondition(txn.status?.conditions ?? [])?.message;
  const changes = txn.spec.changes.length;
  const { state, text } = describe(phase, message, changes);
  return finish({ sha, namespace, name, phase, state, text, path: source.path }, template);
}

/**
 * The status of a commit that became no Transaction: failure naming the first problem by file and
 * line (a rejected directory or declaration, a failed or refused render); success for a commit a
 * newer one was applied instead of (`firstProblem` then says which).
 */
export function statusOfRejection(
  directory: { namespace: string; name: string; commit: string; path?: string | undefined },
  firstProblem: string | undefined,
  problems: number,
  template: StatusTemplate = {},
  phase: RecordPhase = PHASE_REJECTED,
): CommitStatus {
  if (phase === PHASE_SUPERSEDED) {
    const text = `Superseded: not applied on its own; ${firstProblem ?? 'a newer commit was applied instead'}`;
    return finish({ ...directory, sha: directory.commit, phase, state: 'success', text }, template);
  }
  // What matters first, so that cutting a long message at 140 characters loses only its tail.
  const count = problems > 1 ? ` (${problems} problems)` : '';
  return finish(
    {
      ...directory,
      sha: directory.commit,
      phase,
      state: 'failure',
      text: `${phase}${count}, nothing applied: ${firstProblem ?? 'the directory is invalid'}`,
    },
    template,
  );
}

function describe(
  phase: Phase,
  message: string | undefined,
  changes: number,
): { state: StatusState; text: string } {
  switch (phase) {
    case 'Committed':
      return { state: 'success', text: `Committed: ${message ?? `${plural(changes, 'change')} applied`}` };
    case 'RolledBack':
      return { state: 'failure', text: `RolledBack: ${message ?? 'every committed change was undone'}` };
    case 'Failed':
      return { state: 'failure', text: `Failed: ${message ?? 'see the Transaction for why'}` };
    default:
      return { state: 'pending', text: `${phase}: ${RUNNING[phase] ?? 'in progress'}` };
  }
}

function finish(
  s: {
    sha: string;
    namespace: string;
    name: string;
    phase: CommitStatus['phase'];
    state: StatusState;
    text: string;
    path?: string | undefined;
  },
  template: StatusTemplate,
): CommitStatus {
  const targetUrl = template.targetUrl && fillTemplate(template.targetUrl, s);
  return {
    sha: s.sha,
    context: `${CONTEXT_PREFIX}/${s.namespace}/${s.name}`,
    state: s.state,
    description: oneLine(s.text, DESCRIPTION_MAX),
    ...(targetUrl && { targetUrl }),
    phase: s.phase,
  };
}

/** Whitespace (newlines included) collapsed to single spaces, cut to `max` characters with "…". */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const chars = Array.from(flat); // never cut a surrogate pair in two
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join('')}…`;
}

export function fillTemplate(
  template: string,
  v: { namespace: string; name: string; sha: string; phase: string; path?: string | undefined },
): string {
  const values: Record<string, string> = {
    namespace: encodeURIComponent(v.namespace),
    name: encodeURIComponent(v.name),
    sha: encodeURIComponent(v.sha),
    phase: encodeURIComponent(v.phase),
    path: (v.path ?? '').split('/').map(encodeURIComponent).join('/'),
  };
  return template.replace(/\{(namespace|name|sha|phase|path)\}/g, (_, key: string) => values[key] ?? '');
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

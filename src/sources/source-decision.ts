/**
 * What a poll does for one source (docs/sources.md, "What a commit does"), from its status, the
 * state of the transaction its status names, and the commit the poll reached. Pure: the sync
 * (source-sync.ts) gathers the facts and carries the steps out.
 *
 * A source's transactions never overlap: while the one its status names runs, the source waits.
 * Once it ends, its outcome is written first (settle). Then the commit is rendered unless the
 * status already speaks of it, and its render decides (decideRender): a render the cluster
 * already holds needs no transaction (the status moves to the commit); the same render as the last
 * attempted one is not tried again; any other becomes one.
 */
import type { Phase, SourceStatus } from '../api/v1alpha1/index.ts';
import { isTerminal } from '../api/v1alpha1/index.ts';
import type { RenderPlan } from './changes-for-render.ts';

/** The Transaction status.lastAttempted names, as the cluster has it. */
export type Attempt =
  /** The status names no transaction in flight (none, or an outcome already written). */
  | { state: 'none' }
  /** Found, ours, at this phase. */
  | { state: 'found'; phase: Phase | undefined; message: string | undefined; completedAt: string | undefined }
  /** Not in the cluster (or not ours): the create never happened (a crash after the status write). */
  | { state: 'absent' };

export interface SourceFacts {
  status: SourceStatus | undefined;
  /** The commit the poll reached (40 hex). */
  at: string;
  attempt: Attempt;
  /** The commit this process last rendered the source at without changing its status, if any. */
  renderedAt?: string | undefined;
}

export type SourceStep =
  /** Its transaction is in flight. */
  | { do: 'wait' }
  /** Its transaction ended: write the outcome, then decide again. */
  | { do: 'settle'; outcome: 'Committed' | 'RolledBack' | 'Failed' }
  /** Render the source at `at`; `void`: the status names an attempt that never began, forget it. */
  | { do: 'render'; void: boolean }
  /** The status (or this process) already speaks of `at`. */
  | { do: 'nothing' };

export function decideSource(facts: SourceFacts): SourceStep {
  const last = facts.status?.lastAttempted;
  const inFlight = last?.outcome === 'InProgress';
  if (inFlight && facts.attempt.state === 'found') {
    const phase = facts.attempt.phase;
    if (!isTerminal(phase)) return { do: 'wait' };
    return { do: 'settle', outcome: phase as 'Committed' | 'RolledBack' | 'Failed' };
  }
  const voided = inFlight && facts.attempt.state === 'absent';
  if (!voided && last?.revision === facts.at) return { do: 'nothing' };
  if (!voided && facts.renderedAt === facts.at) return { do: 'nothing' };
  return { do: 'render', void: voided };
}

export type RenderStep =
  /** The same render as the last attempt: it is not tried again (the source stays where it is). */
  | { do: 'same' }
  /** The cluster already holds it: no transaction; the status moves to the commit. */
  | { do: 'unchanged' }
  /** One transaction of these changes. */
  | { do: 'transaction' }
  /** Refused by a bound of changes-for-render (too many objects or changes, an object twice). */
  | { do: 'refuse'; message: string };

/**
 * What a render that passed the policy leads to. `digest` is the render's; `attemptVoided`: the
 * status's last attempt never began, so its digest says nothing.
 */
export function decideRender(
  status: SourceStatus | undefined,
  digest: string,
  plan: RenderPlan,
  attemptVoided: boolean,
): RenderStep {
  if (plan.kind === 'refused') return { do: 'refuse', message: plan.message };
  if (plan.kind === 'unchanged') return { do: 'unchanged' };
  const last = status?.lastAttempted;
  if (!attemptVoided && last?.renderDigest === digest && last.outcome !== 'InProgress') return { do: 'same' };
  return { do: 'transaction' };
}

/**
 * The Git side's control object: a ConfigMap `janus-git-control-<hash>` in the controller
 * namespace, one per watched (repository, branch, root), next to the cursor ConfigMap of the same
 * hash. It is Janus's counterpart of a Flux GitRepository's `spec.suspend` and
 * `reconcile.fluxcd.io/requestedAt`:
 *
 * - people (`janus suspend|resume|poll`, or `kubectl annotate`) write its annotations;
 * - the leader watches it, and writes its data: what the last requested poll saw.
 *
 * A separate object from the cursor on purpose: the cursor is written conditionally on every
 * materialization, and a person's write must never make that write conflict. Both sides write
 * with merge patches of disjoint fields, so neither conflicts with the other.
 */
import type { KubeObject } from '../kube/resources.ts';
import { cursorConfigMapName, type WatchedSource } from './state.ts';

/** Present (any value but "false"): no new directories are materialized. */
export const ANNOTATION_SUSPEND = 'tx.janus.io/suspend';
export const ANNOTATION_SUSPEND_REASON = 'tx.janus.io/suspend-reason';
export const ANNOTATION_SUSPENDED_AT = 'tx.janus.io/suspended-at';
export const ANNOTATION_SUSPENDED_BY = 'tx.janus.io/suspended-by';
/** Any new value asks for a poll now; conventionally the time of the request (RFC 3339). */
export const ANNOTATION_POLL_REQUESTED_AT = 'tx.janus.io/poll-requested-at';

export const GIT_CONTROL_COMPONENT = 'git-control';
export const GIT_CONTROL_SELECTOR = `app.kubernetes.io/managed-by=janus,app.kubernetes.io/component=${GIT_CONTROL_COMPONENT}`;

/** `janus-git-control-<hash>`: the same hash as the cursor's `janus-git-state-<hash>`. */
export function gitControlConfigMapName(source: WatchedSource): string {
  return cursorConfigMapName(source).replace(/^janus-git-state-/, 'janus-git-control-');
}

export interface Suspension {
  reason?: string;
  /** When it was suspended, as written by whoever suspended it. */
  since?: string;
  by?: string;
}

/** What the leader recorded about the last poll someone asked for (or the last new tip it read). */
export interface RecordedPoll {
  /** The request (annotation value) this poll answered, when it answered one. */
  request?: string;
  at: string;
  /** The tip of the watched branch it read; absent when it did not read one. */
  commit?: string;
  /** One line: what it did ("2 materialized"), or why it did not ("suspended", the error). */
  result: string;
  ok: boolean;
}

/** The Git side as the control object shows it: what `janus suspend|resume|poll` print. */
export interface GitSideState {
  name: string;
  namespace: string;
  repository: string;
  branch: string;
  root: string;
  suspended: Suspension | undefined;
  /** A request not yet answered by the leader. */
  pendingPollRequest: string | undefined;
  lastPoll: RecordedPoll | undefined;
}

/** The control object the leader creates when there is none: identity only. */
export function renderGitControl(namespace: string, source: WatchedSource): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: gitControlConfigMapName(source),
      namespace,
      labels: {
        'app.kubernetes.io/managed-by': 'janus',
        'app.kubernetes.io/component': GIT_CONTROL_COMPONENT,
      },
    },
    data: {
      repository: source.repository,
      branch: source.branch,
      root: source.root,
      ...(source.instance !== undefined && { instance: source.instance }),
    },
  };
}

export function suspensionOf(object: KubeObject | undefined): Suspension | undefined {
  const annotations = object?.metadata.annotations ?? {};
  const value = annotations[ANNOTATION_SUSPEND];
  if (value === undefined || value.trim().toLowerCase() === 'false') return undefined;
  return {
    ...(annotations[ANNOTATION_SUSPEND_REASON] && { reason: annotations[ANNOTATION_SUSPEND_REASON] }),
    ...(annotations[ANNOTATION_SUSPENDED_AT] && { since: annotations[ANNOTATION_SUSPENDED_AT] }),
    ...(annotations[ANNOTATION_SUSPENDED_BY] && { by: annotations[ANNOTATION_SUSPENDED_BY] }),
  };
}

export function pollRequestOf(object: KubeObject | undefined): string | undefined {
  return object?.metadata.annotations?.[ANNOTATION_POLL_REQUESTED_AT] || undefined;
}

export function recordedPollOf(object: KubeObject | undefined): RecordedPoll | undefined {
  const data = (object?.data ?? {}) as Record<string, string | undefined>;
  if (!data.lastPollAt) return undefined;
  return {
    ...(data.lastHandledPollRequest && { request: data.lastHandledPollRequest }),
    at: data.lastPollAt,
    ...(data.lastPollCommit && { commit: data.lastPollCommit }),
    result: data.lastPollResult ?? '',
    ok: data.lastPollOk !== 'false',
  };
}

/** The data patch that records a poll. */
export function recordPollData(poll: RecordedPoll): Record<string, string | null> {
  return {
    lastHandledPollRequest: poll.request ?? null,
    lastPollAt: poll.at,
    lastPollCommit: poll.commit ?? null,
    lastPollResult: poll.result,
    lastPollOk: String(poll.ok),
  };
}

export function gitSideStateOf(object: KubeObject): GitSideState {
  const data = (object.data ?? {}) as Record<string, string | undefined>;
  const request = pollRequestOf(object);
  const lastPoll = recordedPollOf(object);
  return {
    name: object.metadata.name,
    namespace: object.metadata.namespace ?? '',
    repository: data.repository ?? '',
    branch: data.branch ?? '',
    root: data.root ?? '',
    suspended: suspensionOf(object),
    pendingPollRequest: request !== undefined && request !== lastPoll?.request ? request : undefined,
    lastPoll,
  };
}

/** The annotations `janus suspend` (and the web view) write: suspended, why, since when, by whom. */
export function suspendAnnotations(
  reason: string | undefined,
  by: string | undefined,
  at: Date,
): Record<string, string | null> {
  return {
    [ANNOTATION_SUSPEND]: 'true',
    [ANNOTATION_SUSPEND_REASON]: reason || null,
    [ANNOTATION_SUSPENDED_AT]: at.toISOString(),
    [ANNOTATION_SUSPENDED_BY]: by ?? null,
  };
}

/** What `janus resume` removes: every annotation of a suspension. */
export const RESUME_ANNOTATIONS: Readonly<Record<string, null>> = {
  [ANNOTATION_SUSPEND]: null,
  [ANNOTATION_SUSPEND_REASON]: null,
  [ANNOTATION_SUSPENDED_AT]: null,
  [ANNOTATION_SUSPENDED_BY]: null,
};

/** One line for logs, /readyz and `janus status`: "suspended since <t> by <who>: <reason>". */
export function describeSuspension(suspension: Suspension): string {
  const since = suspension.since ? ` since ${suspension.since}` : '';
  const by = suspension.by ? ` by ${suspension.by}` : '';
  const reason = suspension.reason ? `: ${suspension.reason}` : '';
  return `suspended${since}${by}${reason}`;
}

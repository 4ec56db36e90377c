/**
 * The HTTP requests each forge's commit-status API takes, and how its answer about what a commit
 * already shows is read. Pure: client.ts sends them. The shapes follow each forge's reference:
 * - GitHub: POST /repos/{owner}/{repo}/statuses/{sha} {state, target_url, description, context};
 *   GET /repos/{owner}/{repo}/commits/{ref}/status (the combined status: the latest per context).
 * - Gitea/Forgejo: the same paths under /api/v1 (Gitea copied GitHub's API).
 * - GitLab: POST /projects/:id/statuses/:sha {state, name, description, target_url};
 *   GET /projects/:id/repository/commits/:sha/statuses?name= (the latest per name unless all=true).
 */
import type { Forge } from './forge.ts';
import type { CommitStatus, StatusState } from './state.ts';

export interface ForgeRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT';
  url: string;
  /** JSON body, for POST, PATCH and PUT. */
  body?: Record<string, string>;
}

/** What the commit shows for one context: enough to tell whether a status is already there. */
export interface ShownStatus {
  state: string;
  description: string;
}

/** Statuses of one commit read at once; a commit with more contexts than this is read in part (see shownStatus). */
export const STATUS_PAGE = 100;

/** GitLab has no "pending with a new description": a running pipeline is `running`. */
function gitlabState(status: CommitStatus): string {
  const states: Record<StatusState, string> = { pending: 'pending', success: 'success', failure: 'failed' };
  return status.state === 'pending' && status.phase !== 'Pending' ? 'running' : states[status.state];
}

/** The state as `forge` names it. */
export function forgeState(forge: Forge, status: CommitStatus): string {
  return forge.kind === 'gitlab' ? gitlabState(status) : status.state;
}

export function postStatusRequest(forge: Forge, status: CommitStatus): ForgeRequest {
  const sha = encodeURIComponent(status.sha);
  const link = status.targetUrl ? { target_url: status.targetUrl } : {};
  if (forge.kind === 'gitlab') {
    return {
      method: 'POST',
      url: `${forge.apiBase}/projects/${encodeURIComponent(forge.project)}/statuses/${sha}`,
      body: { state: gitlabState(status), name: status.context, description: status.description, ...link },
    };
  }
  return {
    method: 'POST',
    url: `${forge.apiBase}/repos/${repoPath(forge.project)}/statuses/${sha}`,
    body: { state: status.state, context: status.context, description: status.description, ...link },
  };
}

export function readStatusRequest(forge: Forge, sha: string, context: string): ForgeRequest {
  const ref = encodeURIComponent(sha);
  if (forge.kind === 'gitlab') {
    const query = new URLSearchParams({ name: context, per_page: String(STATUS_PAGE) });
    return {
      method: 'GET',
      url: `${forge.apiBase}/projects/${encodeURIComponent(forge.project)}/repository/commits/${ref}/statuses?${query}`,
    };
  }
  // GitHub calls the page size per_page, Gitea limit; each ignores the other's.
  const query = new URLSearchParams({ per_page: String(STATUS_PAGE), limit: String(STATUS_PAGE) });
  return {
    method: 'GET',
    url: `${forge.apiBase}/repos/${repoPath(forge.project)}/commits/${ref}/status?${query}`,
  };
}

/** The status `context` shows now, from the answer to readStatusRequest; undefined: none yet. */
export function shownStatus(forge: Forge, body: unknown, context: string): ShownStatus | undefined {
  const list = forge.kind === 'gitlab' ? body : (body as { statuses?: unknown } | null)?.statuses;
  if (!Array.isArray(list)) return undefined;
  // GitLab lists by name (`name`), GitHub and Gitea by `context`; the combined status holds one
  // per context, GitLab's list (all=false) the latest per name, newest first.
  for (const entry of list as Record<string, unknown>[]) {
    const name = forge.kind === 'gitlab' ? entry?.name : entry?.context;
    if (name !== context) continue;
    // Gitea calls the state `status` in the combined view; GitHub and GitLab `state`.
    const state = entry.state ?? entry.status;
    return { state: String(state ?? ''), description: String(entry.description ?? '') };
  }
  return undefined;
}

/** Whether what the commit shows is `status` already: nothing to send. */
export function alreadyShown(forge: Forge, shown: ShownStatus | undefined, status: CommitStatus): boolean {
  if (!shown || shown.state !== forgeState(forge, status)) return false;
  // GitLab keeps a running status's first description (it refuses running → running).
  return forge.kind === 'gitlab' && shown.state === 'running'
    ? true
    : shown.description === status.description;
}

export function repoPath(project: string): string {
  return project.split('/').map(encodeURIComponent).join('/');
}

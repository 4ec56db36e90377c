/**
 * The one comment Janus keeps on a pull/merge request: the requests that list, create and update
 * it on each forge, how its earlier comment is found again (a hidden marker), and how a body over
 * the forge's size limit is cut. Pure: src/cli/plan-comment.ts sends them. Shapes per reference:
 * - GitHub: GET/POST /repos/{owner}/{repo}/issues/{number}/comments (per_page ≤ 100, page),
 *   PATCH /repos/{owner}/{repo}/issues/comments/{comment_id} {body}; a body is at most 65,536
 *   characters (docs.github.com/en/rest/issues/comments).
 * - Gitea/Forgejo: the same paths under /api/v1 (GET lists all comments of the issue; PATCH
 *   /repos/{owner}/{repo}/issues/comments/{id}).
 * - GitLab: GET/POST /projects/:id/merge_requests/:iid/notes (per_page ≤ 100, page, sort),
 *   PUT /projects/:id/merge_requests/:iid/notes/:note_id {body}; a note is at most 1,000,000
 *   characters (docs.gitlab.com/api/notes).
 * - Who the token is: GET /user everywhere; on GitHub, POST /graphql `viewer` for an app's
 *   installation token, which /user refuses. Only a comment of that user is ever updated.
 */
import type { Forge, ForgeKind } from './forge.ts';
import { type ForgeRequest, repoPath } from './requests.ts';

/** Comments read per page (the most GitHub and GitLab give). */
export const COMMENT_PAGE = 100;
/** At most this many pages are searched for the earlier comment (2,000 comments). */
export const MAX_COMMENT_PAGES = 20;

/** The longest body each forge takes, in characters. Gitea's is its database column's (TEXT: 65,535 bytes on MySQL), so GitHub's bound is kept, less one. */
export const COMMENT_LIMIT: Record<ForgeKind, number> = { github: 65_536, gitlab: 1_000_000, gitea: 65_535 };

/** The hidden first line that marks Janus's comment for `key` (the planned directory). */
export function commentMarker(key: string): string {
  // "--" would end an HTML comment early.
  return `<!-- janus-plan ${key.replace(/-{2,}/g, '-').replace(/>/g, '')} -->`;
}

function base(forge: Forge, number: number): string {
  return forge.kind === 'gitlab'
    ? `${forge.apiBase}/projects/${encodeURIComponent(forge.project)}/merge_requests/${number}/notes`
    : `${forge.apiBase}/repos/${repoPath(forge.project)}/issues/${number}/comments`;
}

/** Page `page` (from 1) of the request's comments, oldest first. */
export function listCommentsRequest(forge: Forge, number: number, page: number): ForgeRequest {
  const query =
    forge.kind === 'gitlab'
      ? new URLSearchParams({
          per_page: String(COMMENT_PAGE),
          page: String(page),
          sort: 'asc',
          order_by: 'created_at',
        })
      : forge.kind === 'github'
        ? new URLSearchParams({ per_page: String(COMMENT_PAGE), page: String(page) })
        : undefined; // Gitea answers every comment at once
  return { method: 'GET', url: query ? `${base(forge, number)}?${query}` : base(forge, number) };
}

/** Whether a list answer of `count` comments may have a next page. */
export function hasNextPage(forge: Forge, count: number, page: number): boolean {
  return forge.kind !== 'gitea' && count >= COMMENT_PAGE && page < MAX_COMMENT_PAGES;
}

export function createCommentRequest(forge: Forge, number: number, body: string): ForgeRequest {
  return { method: 'POST', url: base(forge, number), body: { body } };
}

export function updateCommentRequest(forge: Forge, number: number, id: number, body: string): ForgeRequest {
  if (forge.kind === 'gitlab') return { method: 'PUT', url: `${base(forge, number)}/${id}`, body: { body } };
  return {
    method: 'PATCH',
    url: `${forge.apiBase}/repos/${repoPath(forge.project)}/issues/comments/${id}`,
    body: { body },
  };
}

/** Who a token is, as the forge numbers its users: the author id its comments carry. */
export interface ForgeUser {
  id: number;
  login: string;
}

/** The token's own user: GET /user on every forge (GitHub, Gitea under /api/v1, GitLab under /api/v4). */
export function currentUserRequest(forge: Forge): ForgeRequest {
  return { method: 'GET', url: `${forge.apiBase}/user` };
}

/**
 * GitHub only: the token's user by GraphQL, for a GitHub App's installation token (GitHub
 * Actions' GITHUB_TOKEN is one), which GET /user refuses (403, "Resource not accessible by
 * integration") while `viewer` answers with the app's bot user (e.g. github-actions[bot]).
 */
export function viewerRequest(forge: Forge): ForgeRequest {
  return {
    method: 'POST',
    url: graphqlUrl(forge.apiBase),
    body: { query: 'query { viewer { login databaseId } }' },
  };
}

/** https://api.github.com/graphql; GitHub Enterprise Server's REST root /api/v3 has /api/graphql beside it. */
export function graphqlUrl(apiBase: string): string {
  return apiBase.endsWith('/api/v3') ? `${apiBase.slice(0, -'/v3'.length)}/graphql` : `${apiBase}/graphql`;
}

/** The user of a GET /user answer (`login` on GitHub and Gitea, `username` on GitLab), or undefined. */
export function parseCurrentUser(answer: unknown): ForgeUser | undefined {
  const user = answer as { id?: unknown; login?: unknown; username?: unknown } | null;
  const login = user?.login ?? user?.username;
  return typeof user?.id === 'number' && typeof login === 'string' ? { id: user.id, login } : undefined;
}

/** The user of a GraphQL viewer answer, or undefined. */
export function parseViewer(answer: unknown): ForgeUser | undefined {
  const viewer = (answer as { data?: { viewer?: { login?: unknown; databaseId?: unknown } } } | null)?.data
    ?.viewer;
  return typeof viewer?.databaseId === 'number' && typeof viewer.login === 'string'
    ? { id: viewer.databaseId, login: viewer.login }
    : undefined;
}

/**
 * The id of the first comment in a list answer that `author` wrote and that begins with `marker`,
 * as Janus's own do; undefined: none. Its author, because anyone who may comment on the pull
 * request can post a comment that begins with the marker: adopting it would put the plan under
 * their name, in a comment they may edit afterwards. Begins, not holds: a reviewer's reply
 * quoting the plan ("> <!-- janus-plan …") is never taken for it and overwritten.
 */
export function findMarkedComment(answer: unknown, marker: string, author: ForgeUser): number | undefined {
  if (!Array.isArray(answer)) return undefined;
  type Entry = { id?: unknown; body?: unknown; user?: { id?: unknown }; author?: { id?: unknown } };
  for (const entry of answer as Entry[]) {
    // GitHub and Gitea name the author `user`, GitLab `author`.
    const by = (entry?.user ?? entry?.author)?.id;
    if (
      typeof entry?.body === 'string' &&
      entry.body.startsWith(marker) &&
      typeof entry.id === 'number' &&
      by === author.id
    ) {
      return entry.id;
    }
  }
  return undefined;
}

/** The comment's body: the marker, then `markdown`, cut at a line to fit `limit` with a note saying so. */
export function commentBody(marker: string, markdown: string, limit: number): string {
  const whole = `${marker}\n${markdown}`;
  if (whole.length <= limit) return whole;
  const note = `\n\n_… cut here: the plan is ${markdown.length.toLocaleString('en-US')} characters, over this forge's ${limit.toLocaleString('en-US')}; the job's output holds all of it._\n`;
  const fence = '\n```';
  let kept = whole.slice(0, Math.max(0, limit - note.length - fence.length));
  const lastLine = kept.lastIndexOf('\n');
  if (lastLine > marker.length) kept = kept.slice(0, lastLine);
  // A cut inside a ``` block would swallow the note into the code.
  const open = (kept.match(/^```/gm) ?? []).length % 2 === 1;
  return `${kept}${open ? fence : ''}${note}`;
}

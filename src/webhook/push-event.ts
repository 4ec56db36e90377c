import { firstHeader, type WebhookHeaders } from './headers.ts';
import type { WebhookProvider } from './providers.ts';

/** What a delivery is about: only pushes can trigger a poll; pings are answered. */
export type WebhookEvent =
  | { readonly kind: 'push' }
  | { readonly kind: 'ping' }
  | { readonly kind: 'other'; readonly name: string };

/** The ref a push names; `undefined` for a generic trigger that names none (it means "any"). */
export type PushRefResult =
  | { readonly ok: true; readonly ref: string | undefined }
  | { readonly ok: false; readonly error: string };

/** Gitea and Forgejo send their own event header and GitHub's; theirs is preferred. */
const EVENT_HEADERS: Readonly<Record<WebhookProvider, readonly string[]>> = {
  github: ['x-github-event'],
  gitea: ['x-gitea-event', 'x-forgejo-event', 'x-github-event'],
  gitlab: ['x-gitlab-event'],
  generic: ['x-janus-event'],
};

/** GitHub, Gitea, Forgejo and generic say `push`; GitLab says `Push Hook` (tags: `Tag Push Hook`). */
const PUSH_EVENTS: ReadonlySet<string> = new Set(['push', 'Push Hook']);

/**
 * Classifies a delivery by its event header. A request without one is treated as a push: the
 * signature already proved who sent it, and its ref still decides whether it triggers.
 */
export function classifyEvent(provider: WebhookProvider, headers: WebhookHeaders): WebhookEvent {
  const name = firstHeader(headers, EVENT_HEADERS[provider])?.trim();
  if (name === undefined || PUSH_EVENTS.has(name)) return { kind: 'push' };
  if (name === 'ping') return { kind: 'ping' };
  return { kind: 'other', name };
}

/**
 * Extracts `ref` ("refs/heads/<branch>", or "refs/tags/<tag>") from a push payload; GitHub,
 * Gitea, Forgejo and GitLab all put it at the top level. A generic trigger may have an empty
 * body or omit `ref`. Nothing else in the payload is trusted or used: the poll reads Git itself.
 */
export function parsePushRef(provider: WebhookProvider, body: Buffer | string): PushRefResult {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  if (provider === 'generic' && text.trim() === '') return { ok: true, ref: undefined };
  let payload: unknown;
  try {
    payload = JSON.parse(text);
  } catch {
    return { ok: false, error: 'body is not JSON: set the webhook content type to application/json' };
  }
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) {
    return { ok: false, error: 'body is not a JSON object' };
  }
  const ref: unknown = (payload as { ref?: unknown }).ref;
  if (typeof ref === 'string' && ref.startsWith('refs/')) return { ok: true, ref };
  if (ref === undefined && provider === 'generic') return { ok: true, ref: undefined };
  return { ok: false, error: 'push payload has no "ref" of the form refs/heads/<branch>' };
}

/** The full ref of a branch name; a name that already is a ref is kept. */
export function branchRef(branch: string): string {
  return branch.startsWith('refs/') ? branch : `refs/heads/${branch}`;
}

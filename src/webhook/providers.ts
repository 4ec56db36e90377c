import { firstHeader, headerValue, type WebhookHeaders } from './headers.ts';

/**
 * Git hosts whose webhooks Janus verifies. Forgejo is a Gitea fork with the same payloads and
 * signatures, so it is handled as `gitea` (and accepted as `/webhook/forgejo`).
 */
export const WEBHOOK_PROVIDERS = ['github', 'gitea', 'gitlab', 'generic'] as const;
export type WebhookProvider = (typeof WEBHOOK_PROVIDERS)[number];

const PATH_ALIASES: Readonly<Record<string, WebhookProvider>> = {
  github: 'github',
  gitea: 'gitea',
  forgejo: 'gitea',
  gitlab: 'gitlab',
  generic: 'generic',
};

/** The provider named by the last segment of `/webhook/<provider>`, if it is one we know. */
export function providerFromPathSegment(segment: string): WebhookProvider | undefined {
  return Object.hasOwn(PATH_ALIASES, segment) ? PATH_ALIASES[segment] : undefined;
}

/**
 * Recognizes the sender from the headers it always sets. Gitea and Forgejo also send GitHub's
 * `X-GitHub-Event` and `X-Hub-Signature-256` for compatibility, so they are checked first; a
 * bare `X-Hub-Signature-256` without `X-GitHub-Event` is a generic sender using GitHub's format.
 * Returns undefined for a request that looks like none of them.
 */
export function detectProvider(headers: WebhookHeaders): WebhookProvider | undefined {
  const has = (name: string): boolean => headerValue(headers, name) !== undefined;
  if (has('x-gitlab-event') || has('x-gitlab-token')) return 'gitlab';
  if (
    has('x-gitea-event') ||
    has('x-gitea-signature') ||
    has('x-forgejo-event') ||
    has('x-forgejo-signature')
  ) {
    return 'gitea';
  }
  if (has('x-github-event')) return 'github';
  if (has('x-janus-signature') || has('x-hub-signature-256')) return 'generic';
  return undefined;
}

/** The sender's id for this delivery, to correlate our logs with the host's delivery log. */
export function deliveryId(headers: WebhookHeaders): string | undefined {
  return firstHeader(headers, [
    'x-github-delivery',
    'x-gitea-delivery',
    'x-forgejo-delivery',
    'x-gitlab-event-uuid',
    'x-janus-delivery',
  ]);
}

import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createWebhookHandler,
  type WebhookHandlerOptions,
  type WebhookOutcome,
  type WebhookTrigger,
} from '../../../src/webhook/index.ts';

export const SECRET = 'It5-a-s3cret!';
export const WATCHED_BRANCH = 'main';

export interface WebhookServer {
  readonly url: string;
  readonly triggers: WebhookTrigger[];
  readonly results: Array<[string, WebhookOutcome]>;
  /** Requests that reached the server's request listener so far. */
  requestsSeen(): number;
  close(): Promise<void>;
}

/**
 * A real node:http server on 127.0.0.1 with the handler mounted at /webhook next to another
 * route, the way the main job mounts it beside /metrics and /healthz.
 */
export async function startWebhookServer(
  overrides: Partial<WebhookHandlerOptions> = {},
): Promise<WebhookServer> {
  const triggers: WebhookTrigger[] = [];
  const results: Array<[string, WebhookOutcome]> = [];
  const handler = createWebhookHandler({
    secret: SECRET,
    branch: WATCHED_BRANCH,
    onTrigger: (trigger) => triggers.push(trigger),
    onResult: (provider, outcome) => results.push([provider, outcome]),
    ...overrides,
  });
  let requestsSeen = 0;
  const server = createServer((req, res) => {
    requestsSeen++;
    if (req.url?.startsWith('/webhook')) handler(req, res);
    else res.writeHead(200).end('other route');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    triggers,
    results,
    requestsSeen: () => requestsSeen,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

export function hmacHex(secret: string, body: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

export function pushBody(branch: string): string {
  return JSON.stringify({ ref: `refs/heads/${branch}`, before: '0'.repeat(40), after: 'a'.repeat(40) });
}

/** How each sender signs a push, as its documentation describes it. */
export interface SenderCase {
  readonly name: string;
  /** The provider label the handler should report. */
  readonly provider: string;
  /** The path that names this sender: `/webhook/<path>`. */
  readonly path: string;
  /** Headers for `body` signed with `secret`. */
  readonly headers: (body: string, secret: string) => Record<string, string>;
  /** Whether the signature covers the body (GitLab sends a bare token instead). */
  readonly signsBody: boolean;
}

export const SENDERS: readonly SenderCase[] = [
  {
    name: 'github',
    path: 'github',
    provider: 'github',
    signsBody: true,
    headers: (body, secret) => ({
      'x-github-event': 'push',
      'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
      'x-hub-signature-256': `sha256=${hmacHex(secret, body)}`,
    }),
  },
  {
    name: 'gitea',
    path: 'gitea',
    provider: 'gitea',
    signsBody: true,
    headers: (body, secret) => ({
      'x-gitea-event': 'push',
      'x-gitea-delivery': 'f6266f16-1bf3-46a5-9ea4-602e06ead473',
      'x-gitea-signature': hmacHex(secret, body),
      // Gitea also sends GitHub's headers; detection must still say gitea.
      'x-github-event': 'push',
    }),
  },
  {
    name: 'forgejo',
    path: 'forgejo',
    provider: 'gitea',
    signsBody: true,
    headers: (body, secret) => ({
      'x-forgejo-event': 'push',
      'x-forgejo-signature': hmacHex(secret, body),
    }),
  },
  {
    name: 'gitlab',
    path: 'gitlab',
    provider: 'gitlab',
    signsBody: false,
    headers: (_body, secret) => ({ 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': secret }),
  },
  {
    name: 'generic',
    path: 'generic',
    provider: 'generic',
    signsBody: true,
    headers: (body, secret) => ({ 'x-janus-signature': `sha256=${hmacHex(secret, body)}` }),
  },
  {
    name: 'generic (X-Hub-Signature-256 style)',
    path: 'generic',
    provider: 'generic',
    signsBody: true,
    headers: (body, secret) => ({ 'x-hub-signature-256': `sha256=${hmacHex(secret, body)}` }),
  },
];

/** The headers that carry the signature or token, to strip for the "missing" case. */
export const AUTH_HEADERS = [
  'x-hub-signature-256',
  'x-gitea-signature',
  'x-forgejo-signature',
  'x-gitlab-token',
  'x-janus-signature',
];

export async function post(url: string, body: string, headers: Record<string, string>): Promise<Response> {
  return fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } });
}

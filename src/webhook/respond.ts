import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** Every webhook answer is a small JSON object the Git host shows in its delivery log. */
export type WebhookResponseBody =
  | { readonly status: 'triggered' | 'pong' }
  | { readonly status: 'ignored'; readonly reason: string }
  | { readonly error: string };

export function sendJson(
  res: ServerResponse,
  statusCode: number,
  body: WebhookResponseBody,
  headers: OutgoingHttpHeaders = {},
): void {
  const payload = JSON.stringify(body);
  res.writeHead(statusCode, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    'cache-control': 'no-store',
  });
  res.end(payload);
}

/**
 * The generic webhook as the tests deliver to it: a secret in a file for --webhook-secret-file, and
 * pushes signed with it the way the provider signs them (x-janus-signature, HMAC-SHA256).
 */
import { createHmac } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const WEBHOOK_SECRET = 'a-long-random-webhook-secret';

/** A push to the branch the tests watch. */
export const PUSH_TO_MAIN = JSON.stringify({ ref: 'refs/heads/main' });

/** Writes `secret` to a new file and returns the arguments that hand it to `janus run`. */
export async function webhookSecretArgs(secret = WEBHOOK_SECRET): Promise<string[]> {
  const file = join(await mkdtemp(join(tmpdir(), 'janus-secret-')), 'webhook-secret');
  await writeFile(file, `${secret}\n`);
  return ['--webhook-secret-file', file];
}

export const signWebhook = (body: string, secret = WEBHOOK_SECRET): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** POSTs `body` to the generic webhook at `baseUrl` with `signature` (default: signed with the secret). */
export function deliverWebhook(
  baseUrl: string,
  body: string,
  signature = signWebhook(body),
): Promise<Response> {
  return fetch(`${baseUrl}/webhook/generic`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-janus-signature': signature },
    body,
  });
}

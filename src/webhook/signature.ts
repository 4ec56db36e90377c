import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { headerValue, type WebhookHeaders } from './headers.ts';
import type { WebhookProvider } from './providers.ts';

export type WebhookSecret = string | Buffer;

/** `valid`, or why the request is not authenticated (all three are answered with 401). */
export type SignatureVerdict = 'valid' | 'missing' | 'malformed' | 'mismatch';

/** A header carrying a hex HMAC-SHA256 of the raw body, optionally behind a prefix. */
interface HmacHeader {
  readonly name: string;
  readonly prefix: string;
}

const HMAC_HEADERS: Readonly<Record<Exclude<WebhookProvider, 'gitlab'>, readonly HmacHeader[]>> = {
  github: [{ name: 'x-hub-signature-256', prefix: 'sha256=' }],
  gitea: [
    { name: 'x-gitea-signature', prefix: '' },
    { name: 'x-forgejo-signature', prefix: '' },
  ],
  generic: [
    { name: 'x-janus-signature', prefix: 'sha256=' },
    { name: 'x-hub-signature-256', prefix: 'sha256=' },
  ],
};

/** What a refused request is told (and the log says); never echoes the signature or secret. */
export const UNAUTHORIZED: Readonly<Record<Exclude<SignatureVerdict, 'valid'>, string>> = {
  missing: 'missing signature',
  malformed: 'malformed signature',
  mismatch: 'invalid signature',
};

const GITLAB_TOKEN_HEADER = 'x-gitlab-token';
const SHA256_HEX = /^[0-9a-f]{64}$/i;

/**
 * Checks that the request was sent by someone who knows `secret`:
 * - github:  `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>`
 * - gitea:   `X-Gitea-Signature` or `X-Forgejo-Signature: <hex HMAC-SHA256(secret, body)>`
 * - gitlab:  `X-Gitlab-Token: <secret>` (GitLab sends the secret itself, not a signature)
 * - generic: `X-Janus-Signature` or `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>`
 * `rawBody` must be the exact bytes received: re-serialized JSON does not verify.
 * All comparisons take the same time wherever the first differing byte is.
 */
export function verifySignature(
  provider: WebhookProvider,
  headers: WebhookHeaders,
  rawBody: Buffer,
  secret: WebhookSecret,
): SignatureVerdict {
  return verifyBodyHmac(
    provider,
    headers,
    provider === 'gitlab' ? undefined : hmacSha256(secret, rawBody),
    secret,
  );
}

/**
 * As verifySignature, given the HMAC-SHA256 of the body computed as it streamed in (unused for
 * GitLab, whose token does not cover the body).
 */
export function verifyBodyHmac(
  provider: WebhookProvider,
  headers: WebhookHeaders,
  bodyHmac: Buffer | undefined,
  secret: WebhookSecret,
): SignatureVerdict {
  const early = verdictBeforeBody(provider, headers, secret);
  if (early !== undefined) return early;
  const header = signatureHeader(provider, headers);
  const received = header && parseHexDigest(headerValue(headers, header.name) ?? '', header.prefix);
  return received && bodyHmac && constantTimeEqual(received, bodyHmac) ? 'valid' : 'mismatch';
}

/**
 * The verdict the headers alone give, before a byte of the body is read: GitLab's token is
 * checked in full; a missing or malformed signature is refused. Undefined when only the body's
 * HMAC can tell, so an unauthenticated sender costs no body reading when it sends no signature.
 */
export function verdictBeforeBody(
  provider: WebhookProvider,
  headers: WebhookHeaders,
  secret: WebhookSecret,
): SignatureVerdict | undefined {
  if (provider === 'gitlab') return verifyToken(headerValue(headers, GITLAB_TOKEN_HEADER), secret);
  const header = signatureHeader(provider, headers);
  if (header === undefined) return 'missing';
  if (parseHexDigest(headerValue(headers, header.name) ?? '', header.prefix) === undefined)
    return 'malformed';
  return undefined;
}

function signatureHeader(
  provider: Exclude<WebhookProvider, 'gitlab'> | WebhookProvider,
  headers: WebhookHeaders,
) {
  if (provider === 'gitlab') return undefined;
  return HMAC_HEADERS[provider].find((candidate) => headerValue(headers, candidate.name) !== undefined);
}

export function hmacSha256(secret: WebhookSecret, body: Buffer): Buffer {
  return createHmac('sha256', secret).update(body).digest();
}

/** Length check first: timingSafeEqual throws on buffers of different lengths. */
export function constantTimeEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * A shared token is compared through SHA-256 digests so both sides have the same length:
 * comparing the raw values would need a length check that answers faster for a wrong length,
 * telling a prober how long the secret is.
 */
function verifyToken(received: string | undefined, secret: WebhookSecret): SignatureVerdict {
  if (received === undefined) return 'missing';
  return constantTimeEqual(sha256(received), sha256(secret)) ? 'valid' : 'mismatch';
}

function sha256(value: WebhookSecret): Buffer {
  return createHash('sha256').update(value).digest();
}

function parseHexDigest(value: string, prefix: string): Buffer | undefined {
  const trimmed = value.trim();
  if (!trimmed.startsWith(prefix)) return undefined;
  const hex = trimmed.slice(prefix.length);
  return SHA256_HEX.test(hex) ? Buffer.from(hex, 'hex') : undefined;
}

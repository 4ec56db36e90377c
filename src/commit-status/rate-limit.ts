/**
 * What a forge's answer says about trying again: a rate limit names when (Retry-After, in seconds
 * or as an HTTP date; GitHub's X-RateLimit-Reset and GitLab's RateLimit-Reset, in epoch seconds,
 * when no request is left), an outage does not (the one backoff decides), and a refusal that
 * retrying cannot fix is given up. Pure.
 */

export type Verdict =
  | { kind: 'done' }
  /** Try again; after `afterMs` when the forge said when (never shorter than the backoff's delay). */
  | { kind: 'retry'; afterMs?: number; why: string }
  /** Retrying cannot help (a bad token, an unknown commit): logged and counted, not retried. */
  | { kind: 'give-up'; why: string };

/** A forge's "wait" longer than this is capped: the status is late, never lost. */
export const MAX_RATE_LIMIT_WAIT_MS = 15 * 60_000;

type Headers = { get(name: string): string | null };

export function judgeResponse(status: number, headers: Headers, body: string, now: number): Verdict {
  if (status >= 200 && status < 300) return { kind: 'done' };
  const wait = rateLimitWait(status, headers, now);
  if (wait !== undefined) return { kind: 'retry', afterMs: wait, why: `rate limited (HTTP ${status})` };
  if (status === 408 || status === 429 || status >= 500) return { kind: 'retry', why: `HTTP ${status}` };
  return { kind: 'give-up', why: `HTTP ${status}: ${body.replace(/\s+/g, ' ').slice(0, 200)}` };
}

/** How long a rate-limited answer asks to wait; undefined when the answer is no rate limit. */
export function rateLimitWait(status: number, headers: Headers, now: number): number | undefined {
  if (status !== 429 && status !== 403) return undefined;
  const retryAfter = headers.get('retry-after');
  if (retryAfter !== null) {
    const seconds = Number(retryAfter);
    const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(retryAfter) - now;
    if (!Number.isNaN(ms)) return clamp(ms);
  }
  // A 403 is a rate limit only when the forge says none are left; else it is a refusal.
  const remaining = headers.get('x-ratelimit-remaining') ?? headers.get('ratelimit-remaining');
  const reset = headers.get('x-ratelimit-reset') ?? headers.get('ratelimit-reset');
  if (remaining === '0' && reset !== null && Number.isFinite(Number(reset))) {
    return clamp(Number(reset) * 1000 - now);
  }
  return status === 429 ? 0 : undefined;
}

function clamp(ms: number): number {
  return Math.min(MAX_RATE_LIMIT_WAIT_MS, Math.max(0, Math.round(ms)));
}

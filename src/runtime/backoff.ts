/**
 * Exponential backoff with jitter, shared by the informer (reconnects), the work queue (per-key
 * retries), leader election (retry period), the Git poller and the results writer and reporter
 * (an unreachable Git server, a rejected push). Pure: randomness is injected.
 */

export interface BackoffPolicy {
  /** Delay of the first retry. */
  readonly baseMs: number;
  /** No delay exceeds this. */
  readonly capMs: number;
  /**
   * Fraction (0..1) by which a delay is shortened at random, so that many clients failing
   * together do not retry together. Jitter shortens rather than lengthens, so the cap holds and
   * keys stuck at the cap still spread out.
   */
  readonly jitter: number;
}

export type Random = () => number;

const MAX_EXPONENT = 30;

/** The delay before retry number `attempt` (0-based): base·2^attempt, capped, then jittered. */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: Random = Math.random): number {
  // The exponent is bounded so that a zero base never meets 2^1024 = Infinity (0·∞ is NaN).
  const exponential = Math.min(
    policy.capMs,
    policy.baseMs * 2 ** Math.min(MAX_EXPONENT, Math.max(0, attempt)),
  );
  return Math.round(exponential * (1 - policy.jitter * random()));
}

/** `ms` stretched by up to `factor`·ms at random (client-go's wait.Jitter). */
export function jitterUp(ms: number, factor: number, random: Random = Math.random): number {
  return Math.round(ms * (1 + factor * random()));
}

/**
 * Per-key failure counts and their backoff, as client-go's ItemExponentialFailureRateLimiter:
 * each `next(key)` returns a longer delay until `forget(key)`.
 */
export class KeyedBackoff {
  readonly #policy: BackoffPolicy;
  readonly #random: Random;
  readonly #failures = new Map<string, number>();

  constructor(policy: BackoffPolicy, random: Random = Math.random) {
    this.#policy = policy;
    this.#random = random;
  }

  /** Records one more failure of `key` and returns how long to wait before retrying it. */
  next(key: string): number {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    return backoffDelay(failures, this.#policy, this.#random);
  }

  failures(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  forget(key: string): void {
    this.#failures.delete(key);
  }
}

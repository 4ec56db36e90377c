/** Exponential backoff with jitter, so writers that collided do not collide again in lock step. */

export interface BackoffPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
}

/**
 * Delay before retry number `attempt` (0-based): between half and all of
 * min(initial * 2^attempt, max), chosen by `random` (0 ≤ random() < 1).
 */
export function backoffDelay(
  attempt: number,
  policy: BackoffPolicy,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** Math.min(attempt, 30));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Retrying what passes by itself: 429 (e.g. "storage is (re)initializing" right after a CRD is
 * installed), 5xx and dropped connections. The REST client never retries on its own; the CLI's
 * reads do, a few times, as kubectl does. A server that is not there (connection refused, no
 * such host, a certificate it does not trust) is reported at once: retrying it only made
 * `janus status` fail after 8 s instead of at once.
 */
import { isServerAbsent, isTransient } from '../kube/errors.ts';

export const RETRY_DELAY_MS = 500;

/** Whether a one-shot command should try again after `e`. */
export function isWorthRetrying(e: unknown): boolean {
  return isTransient(e) && !isServerAbsent(e);
}

export const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** Up to `attempts` tries, doubling the delay; the last error is thrown. */
export async function withRetries<T>(attempt: () => Promise<T>, attempts = 5): Promise<T> {
  for (let n = 1; ; n++) {
    try {
      return await attempt();
    } catch (e) {
      if (!isWorthRetrying(e) || n >= attempts) throw e;
      await sleep(RETRY_DELAY_MS * 2 ** (n - 1));
    }
  }
}

/** Tries until success or until `signal` aborts (then undefined): for watches that run until stopped. */
export async function retryUntilAborted<T>(
  attempt: () => Promise<T>,
  signal: AbortSignal,
): Promise<T | undefined> {
  while (!signal.aborted) {
    try {
      return await attempt();
    } catch (e) {
      if (!isWorthRetrying(e)) throw e;
      await sleep(RETRY_DELAY_MS, signal);
    }
  }
  return undefined;
}

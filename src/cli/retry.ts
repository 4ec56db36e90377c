/**
 * Retrying what passes by itself: 429 (e.g. "storage is (re)initializing" right after a CRD is
 * installed), 5xx and network errors. The REST client never retries on its own; the CLI's reads
 * do, a few times, as kubectl does.
 */
import { isTransient } from '../kube/errors.ts';

export const RETRY_DELAY_MS = 500;

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
      if (!isTransient(e) || n >= attempts) throw e;
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
      if (!isTransient(e)) throw e;
      await sleep(RETRY_DELAY_MS, signal);
    }
  }
  return undefined;
}

import type { Logger } from '../log/index.ts';

/**
 * Aborts on the first SIGTERM or SIGINT: the manager then finishes the current steps and exits.
 * The handlers are `once`: a second signal ends the process at once, as Node does by default.
 */
export function shutdownSignal(log: Logger): AbortSignal {
  const stopping = new AbortController();
  const onSignal = (signal: string) => {
    log.info({ signal }, 'shutting down: finishing the current steps');
    stopping.abort();
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
  return stopping.signal;
}

/** Resolves once `signal` aborts (at once if it has). */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** Ctrl-C (SIGINT) and SIGTERM as an AbortSignal, so long-running commands stop cleanly. */

export interface Interrupt {
  /** Aborts on SIGINT or SIGTERM, or when the optional time limit passes. */
  readonly signal: AbortSignal;
  /** Which one stopped us, once one did. */
  readonly reason: () => 'interrupted' | 'timeout' | undefined;
  /** Removes the signal handlers: the next Ctrl-C ends the process as usual. */
  dispose(): void;
}

export function onInterrupt(timeoutMs?: number): Interrupt {
  const controller = new AbortController();
  let reason: 'interrupted' | 'timeout' | undefined;
  const handler = () => {
    reason ??= 'interrupted';
    controller.abort(new Error('interrupted'));
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          reason ??= 'timeout';
          controller.abort(new Error('timed out'));
        }, timeoutMs);
  return {
    signal: controller.signal,
    reason: () => reason,
    dispose() {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
      if (timer) clearTimeout(timer);
    },
  };
}

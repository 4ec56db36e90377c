/**
 * Wraps injected hooks (metrics) so that a throwing one is reported instead of breaking the loop
 * that called it: a metrics bug must never wedge a work-queue key or end an informer.
 */
export function guardHooks<T extends object>(
  hooks: T | undefined,
  names: ReadonlyArray<keyof T & string>,
  report: (error: unknown, hook: string) => void,
): T {
  const guarded: Record<string, (...args: unknown[]) => void> = {};
  for (const name of names) {
    const hook = hooks?.[name];
    if (typeof hook !== 'function') continue;
    guarded[name] = (...args: unknown[]) => {
      try {
        hook.apply(hooks, args);
      } catch (e) {
        report(e, name);
      }
    };
  }
  return guarded as T;
}

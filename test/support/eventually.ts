/**
 * Polls `check` until it stops throwing. Integration tests wait for conditions this way and never
 * sleep a fixed time: on a slow, busy machine a condition can take longer, never less.
 */
export async function eventually<T>(
  check: () => Promise<T> | T,
  { timeoutMs = 60_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      return await check();
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      const message = last instanceof Error ? last.message : String(last);
      throw new Error(`condition not met within ${timeoutMs} ms: ${message}`, { cause: last });
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export async function eventually(check, { timeoutMs = 60_000, intervalMs = 100 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
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

import type { Server, ServerResponse } from 'node:http';

/**
 * Returns an idempotent close() for `server` that drains it: stop accepting, close idle
 * keep-alive connections now, let requests in flight finish on connections that then close
 * (their responses say `Connection: close`), and cut whatever remains after `graceMs`.
 *
 * `server.close()` alone would leave a keep-alive connection open after its in-flight request
 * answers, until the client or the keep-alive timeout ends it.
 */
export function gracefulClose(server: Server, graceMs: number): () => Promise<void> {
  const inFlight = new Set<ServerResponse>();
  let closing: Promise<void> | undefined;

  // Registered before the routes' listener, so a response is tracked before anything writes to it.
  server.prependListener('request', (_req, res: ServerResponse) => {
    if (closing) res.setHeader('connection', 'close');
    inFlight.add(res);
    res.once('close', () => inFlight.delete(res));
  });

  return () => {
    closing ??= new Promise<void>((resolve, reject) => {
      for (const res of inFlight) if (!res.headersSent) res.setHeader('connection', 'close');
      const cut = setTimeout(() => server.closeAllConnections(), graceMs).unref();
      server.close((error) => {
        clearTimeout(cut);
        if (error) reject(error);
        else resolve();
      });
      server.closeIdleConnections();
    });
    return closing;
  };
}

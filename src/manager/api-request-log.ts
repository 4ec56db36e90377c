import type { KubeClient } from '../kube/client.ts';
import type { Logger } from '../log/index.ts';

/** At debug level, one log line per API request: what a support case needs to see. */
export function logApiRequests(client: KubeClient, log: Logger): void {
  if (!log.isLevelEnabled('debug')) return;
  client.connection.observe((r) =>
    log.debug(
      {
        n: client.connection.requestCount,
        method: r.method,
        path: r.path,
        status: r.status,
        as: r.impersonating,
      },
      'api request',
    ),
  );
}

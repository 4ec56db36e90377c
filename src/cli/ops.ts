/**
 * The parts the long-running commands (controller, run) share: metrics, the operations server,
 * and the saga controller they run while they lead.
 */
import { type ControllerMetrics, TransactionController } from '../controller/controller.ts';
import type { KubeClient } from '../kube/client.ts';
import type { Logger } from '../log/index.ts';
import type { Metrics } from '../metrics/index.ts';
import { type NamedCheck, type OpsServer, startOpsServer } from '../server/index.ts';
import type { WebhookRequestHandler } from '../webhook/index.ts';
import { type Flags, UsageError } from './command.ts';

export const OPS_FLAGS = {
  'metrics-bind-address': {
    type: 'string',
    env: 'JANUS_METRICS_BIND_ADDRESS',
    default: ':8080',
    placeholder: 'host:port',
    description:
      'where /metrics, /healthz, /readyz (and /webhook for janus run) are served; "0" turns it off',
  },
} as const satisfies Flags;

export function parseBindAddress(value: string): { host: string; port: number } | undefined {
  if (value === '0') return undefined;
  const match = /^(.*):(\d+)$/.exec(value);
  if (!match) throw new UsageError(`--metrics-bind-address: expected host:port or :port, got "${value}"`);
  const port = Number(match[2]);
  if (port > 65535) throw new UsageError(`--metrics-bind-address: port ${port} is out of range`);
  return { host: match[1] || '0.0.0.0', port };
}

/** The controller's view of the metrics registry. */
function controllerMetrics(metrics: Metrics): ControllerMetrics {
  return {
    ...metrics,
    transition: metrics.transition,
    transactionFinished: metrics.transactionFinished,
    itemOperation: metrics.itemOperation,
    itemCount: metrics.itemCount,
    lockOperation: metrics.lockOperation,
    activeTransactions: metrics.setActiveTransactions,
    reconcile: metrics.reconcile,
    workQueue: metrics.workQueueMetrics('transactions'),
  };
}

export async function startOps(opts: {
  bindAddress: string;
  metrics: Metrics;
  ready: NamedCheck[];
  webhook?: WebhookRequestHandler;
  log: Logger;
}): Promise<OpsServer | undefined> {
  const bind = parseBindAddress(opts.bindAddress);
  if (!bind) return undefined;
  return startOpsServer({
    ...bind,
    metrics: opts.metrics,
    // Alive as long as the event loop answers: a restart would not fix anything else.
    health: { live: () => ({ ok: true, detail: 'event loop answers' }), ready: opts.ready },
    ...(opts.webhook && { webhook: opts.webhook }),
    logger: opts.log,
  });
}

/** Starts the saga controller on the leader: reconciles Transactions until stopped. */
export function startTransactionController(opts: {
  client: KubeClient;
  controllerNamespace: string;
  watchNamespace: string | undefined;
  concurrency: number;
  metrics: Metrics;
  log: Logger;
}): TransactionController {
  const controller = new TransactionController({ ...opts, metrics: controllerMetrics(opts.metrics) });
  controller.start();
  opts.log.info(
    { namespace: opts.watchNamespace ?? '(all)', concurrency: opts.concurrency },
    'controller started',
  );
  return controller;
}

/** Ready once the leader's controller has listed and watched Transactions; a standby is ready to take over. */
export function informersSyncedCheck(current: () => TransactionController | undefined): NamedCheck {
  return {
    name: 'informers-synced',
    check: () => {
      const controller = current();
      if (!controller) return { ok: true, detail: 'standby' };
      return controller.hasSynced()
        ? { ok: true, detail: 'Transactions listed and watched' }
        : { ok: false, detail: 'listing Transactions' };
    },
  };
}

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

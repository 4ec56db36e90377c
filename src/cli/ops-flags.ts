/**
 * The parts the long-running commands (controller, run) share: metrics, the operations server,
 * and the saga controller they run while they lead.
 */
import { type ControllerMetrics, TransactionController } from '../controller/controller.ts';
import { transactionSelector } from '../controller/installation.ts';
import type { KubeClient } from '../kube/client.ts';
import type { Logger } from '../log/index.ts';
import type { Metrics } from '../metrics/index.ts';
import type { RetentionOptions } from '../retention/pruner.ts';
import { type NamedCheck, type OpsServer, startOpsServer, startWebhookServer } from '../server/index.ts';
import type { WebhookRequestHandler } from '../webhook/index.ts';
import { type Flags, UsageError } from './command.ts';

export const OPS_FLAGS = {
  'metrics-bind-address': {
    type: 'string',
    env: 'JANUS_METRICS_BIND_ADDRESS',
    default: ':8080',
    placeholder: 'host:port',
    description:
      'where /metrics, /healthz, /readyz (and /webhook for janus run, unless --webhook-bind-address) are served; "0" turns it off',
  },
} as const satisfies Flags;

/** `host:port` or `:port` (all interfaces); undefined for "0" (off). */
export function parseBindAddress(
  value: string,
  flag = 'metrics-bind-address',
): { host: string; port: number } | undefined {
  if (value === '0') return undefined;
  const match = /^(.*):(\d+)$/.exec(value);
  if (!match) throw new UsageError(`--${flag}: expected host:port or :port, got "${value}"`);
  const port = Number(match[2]);
  if (port > 65535) throw new UsageError(`--${flag}: port ${port} is out of range`);
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
    healthCheck: metrics.healthCheck,
    lockOperation: metrics.lockOperation,
    activeTransactions: metrics.setActiveTransactions,
    reconcile: metrics.reconcile,
    workQueue: metrics.workQueueMetrics('transactions'),
  };
}

/** The listeners startOps started; close() stops them all. */
export interface OpsListeners {
  close(): Promise<void>;
}

/**
 * The operations listener (metrics, probes, and the webhook unless it has its own), and the
 * webhook's own listener when `webhookBindAddress` is given (then the operations listener does not
 * serve /webhook).
 */
export async function startOps(opts: {
  bindAddress: string;
  metrics: Metrics;
  ready: NamedCheck[];
  webhook?: WebhookRequestHandler;
  /** Serve the webhook here, alone. */
  webhookBindAddress?: string;
  log: Logger;
}): Promise<OpsListeners | undefined> {
  const bind = parseBindAddress(opts.bindAddress);
  const webhookBind =
    opts.webhookBindAddress === undefined
      ? undefined
      : parseBindAddress(opts.webhookBindAddress, 'webhook-bind-address');
  const servers: OpsServer[] = [];
  const close = async () => {
    await Promise.all(servers.map((s) => s.close()));
  };
  try {
    if (bind) {
      servers.push(
        await startOpsServer({
          ...bind,
          metrics: opts.metrics,
          // Alive as long as the event loop answers: a restart would not fix anything else.
          health: { live: () => ({ ok: true, detail: 'event loop answers' }), ready: opts.ready },
          ...(opts.webhook && !webhookBind && { webhook: opts.webhook }),
          logger: opts.log,
        }),
      );
    }
    if (opts.webhook && webhookBind) {
      servers.push(await startWebhookServer({ ...webhookBind, webhook: opts.webhook, logger: opts.log }));
    }
  } catch (error) {
    await close(); // the second port could not be bound: do not leave the first one open
    throw error;
  }
  return servers.length === 0 ? undefined : { close };
}

/** Starts the saga controller on the leader: reconciles Transactions until stopped. */
export function startTransactionController(opts: {
  client: KubeClient;
  controllerNamespace: string;
  watchNamespace: string | undefined;
  /** This installation's instance (src/controller/installation.ts); undefined: the default one. */
  instance: string | undefined;
  concurrency: number;
  metrics: Metrics;
  log: Logger;
  /** Prune finished Transactions by this policy; never when undefined. */
  retention?: RetentionOptions;
}): TransactionController {
  const controller = new TransactionController({
    ...opts,
    metrics: controllerMetrics(opts.metrics),
    ...(opts.retention && { retention: { ...opts.retention, onPruned: opts.metrics.transactionPruned } }),
  });
  controller.start();
  opts.log.info(
    {
      namespace: opts.watchNamespace ?? '(all)',
      transactions: transactionSelector(opts.instance),
      concurrency: opts.concurrency,
      retention: opts.retention?.policy ?? 'off',
    },
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

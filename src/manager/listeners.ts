/**
 * The listeners every replica runs: the operations server (metrics, probes, and /webhook unless
 * it has its own listener), and the webhook's own listener.
 */
import type { Logger } from '../log/index.ts';
import type { Metrics } from '../metrics/index.ts';
import { type NamedCheck, type OpsServer, startOpsServer, startWebhookServer } from '../server/index.ts';
import type { WebhookRequestHandler } from '../webhook/index.ts';
import type { BindAddress } from './options.ts';
import type { RunnablePlan } from './runnables.ts';

/** The listeners startListeners started; close() stops them all. */
export interface Listeners {
  close(): Promise<void>;
}

export async function startListeners(o: {
  plan: Pick<RunnablePlan, 'everyReplica' | 'webhook'>;
  opsAddress: BindAddress | undefined;
  webhookAddress: BindAddress | undefined;
  metrics: Metrics;
  ready: NamedCheck[];
  webhook: WebhookRequestHandler | undefined;
  log: Logger;
}): Promise<Listeners | undefined> {
  const servers: OpsServer[] = [];
  const close = async () => {
    await Promise.all(servers.map((s) => s.close()));
  };
  try {
    if (o.plan.everyReplica.includes('ops-server') && o.opsAddress) {
      servers.push(
        await startOpsServer({
          ...o.opsAddress,
          metrics: o.metrics,
          // Alive as long as the event loop answers: a restart would not fix anything else.
          health: { live: () => ({ ok: true, detail: 'event loop answers' }), ready: o.ready },
          ...(o.plan.webhook === 'ops-server' && o.webhook && { webhook: o.webhook }),
          logger: o.log,
        }),
      );
    }
    if (o.plan.everyReplica.includes('webhook-listener') && o.webhook && o.webhookAddress) {
      servers.push(await startWebhookServer({ ...o.webhookAddress, webhook: o.webhook, logger: o.log }));
    }
  } catch (error) {
    await close(); // the second port could not be bound: do not leave the first one open
    throw error;
  }
  return servers.length === 0 ? undefined : { close };
}

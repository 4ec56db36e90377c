/**
 * The notifier of one leadership term (src/notify): only the leader notifies, as only it writes
 * results, so two replicas never send the same event twice between them.
 */
import type { TransactionCache } from '../controller/transaction-cache.ts';
import type { GitRepository } from '../git/repository.ts';
import type { KubeClient } from '../kube/client.ts';
import { Discovery, Objects } from '../kube/resources.ts';
import type { Metrics } from '../metrics/index.ts';
import type { NotifyConfigFile } from '../notify/config-file.ts';
import { LedgerStore } from '../notify/ledger-store.ts';
import { DEFAULT_REPLAY_WINDOW_MS, Notifier } from '../notify/notifier.ts';
import { VERSION } from '../version.ts';
import type { ManagerOptions } from './options.ts';

export function startNotifier(
  o: Pick<ManagerOptions, 'watchNamespace' | 'instance' | 'log' | 'controllerNamespace'>,
  deps: {
    client: KubeClient;
    cache: TransactionCache;
    metrics: Metrics;
    config: NotifyConfigFile;
    repository?: GitRepository | undefined;
  },
): Notifier {
  const { repository } = deps;
  const log = o.log.child({ component: 'notifier' });
  // Kept twice the replay window: a delivery can end well after its phase began (retries, a queue).
  const ledger = new LedgerStore({
    objects: new Objects(deps.client, new Discovery(deps.client)),
    namespace: o.controllerNamespace,
    instance: o.instance,
    watchNamespace: o.watchNamespace,
    keepMs: 2 * DEFAULT_REPLAY_WINDOW_MS,
    log,
  });
  // Every configured provider's counters exist from the start (zeros), so the alert on a provider
  // that keeps failing (manifests/monitoring) can tell "none sent" from "no series".
  const configuredProviders = async () => {
    const config = await deps.config.current();
    for (const provider of config.providers) deps.metrics.notification(provider.name, undefined);
    return config;
  };
  void configuredProviders().catch((err: unknown) => log.warn({ err }, 'notification settings not read'));
  const notifier = new Notifier({
    cache: deps.cache,
    config: () => configuredProviders(),
    // An event reads the result record, which names no writer: any identity does.
    context: { controllerVersion: VERSION, identity: 'janus' },
    log,
    onDelivery: deps.metrics.notification,
    ledger,
    // janus run: the author's name from the commit it fetched (a local read, no request).
    authorOf:
      repository &&
      ((commit) => repository.run(async (session) => (await session.store.readCommit(commit)).author.name)),
  });
  notifier.start();
  return notifier;
}

/**
 * The notifier of one leadership term (src/notify): only the leader notifies, as only it writes
 * results, so two replicas never send the same event twice between them.
 */
import type { GitRepository } from '../git/repository.ts';
import type { KubeClient } from '../kube/client.ts';
import type { Metrics } from '../metrics/index.ts';
import type { NotifyConfigFile } from '../notify/config-file.ts';
import { Notifier } from '../notify/notifier.ts';
import { VERSION } from '../version.ts';
import type { ManagerOptions } from './options.ts';

export function startNotifier(
  o: Pick<ManagerOptions, 'watchNamespace' | 'instance' | 'log'>,
  deps: {
    client: KubeClient;
    metrics: Metrics;
    config: NotifyConfigFile;
    repository?: GitRepository | undefined;
  },
): Notifier {
  const { repository } = deps;
  const notifier = new Notifier({
    client: deps.client,
    config: () => deps.config.current(),
    // An event reads the result record, which names no writer: any identity does.
    context: { controllerVersion: VERSION, identity: 'janus' },
    watchNamespace: o.watchNamespace,
    instance: o.instance,
    log: o.log.child({ component: 'notifier' }),
    onDelivery: deps.metrics.notification,
    // janus run: the author's name from the commit it fetched (a local read, no request).
    authorOf:
      repository &&
      ((commit) => repository.run(async (session) => (await session.store.readCommit(commit)).author.name)),
  });
  notifier.start();
  return notifier;
}

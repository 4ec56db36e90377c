/**
 * Runs the leader's work in terms: with leader election, each time this replica wins the Lease
 * (src/runtime/leader-election.ts) until `stopping` aborts; without, once, from the start.
 */
import type { KubeClient } from '../kube/client.ts';
import type { Logger } from '../log/index.ts';
import { LeaderElector } from '../runtime/leader-election.ts';
import type { LeaderElectionOptions } from './options.ts';
import { aborted } from './signals.ts';

export async function leadUntil(
  stopping: AbortSignal,
  opts: {
    client: KubeClient;
    namespace: string;
    election: LeaderElectionOptions;
    log: Logger;
    /** One term's work; `signal` aborts when the term ends (lost Lease, or stopping). */
    work(signal: AbortSignal): Promise<void>;
    onLeading?(leading: boolean): void;
  },
): Promise<void> {
  if (!opts.election.enabled) {
    opts.onLeading?.(true);
    await opts.work(stopping);
    return;
  }
  const elector = new LeaderElector({
    client: opts.client,
    namespace: opts.namespace,
    name: opts.election.leaseName,
    ...opts.election.timings,
    logger: opts.log,
    onStartedLeading: (term) => {
      opts.log.info('became leader');
      opts.onLeading?.(true);
      return opts.work(AbortSignal.any([term, stopping]));
    },
    onStoppedLeading: () => {
      opts.log.info('stopped leading');
      opts.onLeading?.(false);
    },
  });
  elector.start();
  await aborted(stopping);
  await elector.stop();
}

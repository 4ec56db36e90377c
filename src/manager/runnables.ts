/**
 * Which runnables the manager starts for a set of options, and where: the listeners on every
 * replica (a standby answers probes and acknowledges webhooks), the rest only on the leader.
 * Pure: manager.ts starts exactly what this returns.
 */
import type { BindAddress, ManagerOptions } from './options.ts';

/** Started before the election on every replica, closed last. */
export type ReplicaRunnable = 'ops-server' | 'webhook-listener';

/** Started in this order when a term begins, stopped in reverse when it ends. */
export type LeaderRunnable = 'transaction-controller' | 'git-side';

export interface RunnablePlan {
  everyReplica: readonly ReplicaRunnable[];
  /** Whether replicas elect a leader on the Lease; false: this one leads from the start. */
  leaderElection: boolean;
  whileLeading: readonly LeaderRunnable[];
  /** Where POST /webhook is served, if anywhere. */
  webhook: 'off' | 'ops-server' | 'webhook-listener';
  /**
   * Which finished Transactions the retention sweep (run by the controller) may prune: none; those
   * not from Git (only janus run knows whether an outcome is on the results branch); or those
   * from Git too, once their outcome is on the results branch.
   */
  retention: 'off' | 'not-from-git' | 'once-recorded';
  /** The checks /readyz runs, in this order. */
  readiness: readonly ReadinessCheckName[];
}

export type ReadinessCheckName = 'informers-synced' | 'git-reachable';

export function planRunnables(
  o: Pick<ManagerOptions, 'opsAddress' | 'retention' | 'leaderElection' | 'git'>,
): RunnablePlan {
  const webhook = webhookPlace(o.opsAddress, o.git?.webhook?.address, o.git?.webhook !== undefined);
  return {
    everyReplica: [
      ...(o.opsAddress ? (['ops-server'] as const) : []),
      ...(webhook === 'webhook-listener' ? (['webhook-listener'] as const) : []),
    ],
    leaderElection: o.leaderElection.enabled,
    whileLeading: o.git ? ['transaction-controller', 'git-side'] : ['transaction-controller'],
    webhook,
    retention: !o.retention ? 'off' : o.git ? 'once-recorded' : 'not-from-git',
    readiness: o.git ? ['informers-synced', 'git-reachable'] : ['informers-synced'],
  };
}

/** A webhook with a listener of its own is served there alone; else with the metrics, when those are on. */
function webhookPlace(
  ops: BindAddress | undefined,
  own: BindAddress | undefined,
  configured: boolean,
): RunnablePlan['webhook'] {
  if (!configured) return 'off';
  if (own) return 'webhook-listener';
  return ops ? 'ops-server' : 'off';
}

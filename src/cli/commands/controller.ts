/** `janus controller`: the saga controller alone, for users who only want the CRD. */
import { existsSync, readFileSync } from 'node:fs';
import type { TransactionController } from '../../controller/controller.ts';
import { leaderElectionId } from '../../controller/installation.ts';
import { KubeClient } from '../../kube/client.ts';
import { createLogger, isLogLevel, type Logger } from '../../log/index.ts';
import { Metrics } from '../../metrics/index.ts';
import { DEFAULT_RETENTION, fromGit, type RetentionPolicy } from '../../retention/select.ts';
import { LeaderElector, type LeaderTimings, leaderTimingsProblem } from '../../runtime/leader-election.ts';
import { VERSION } from '../../version.ts';
import { defineCommand, durationFlag, KUBE_FLAGS, LOG_FLAGS, positiveInt, UsageError } from '../command.ts';
import { INSTANCE_FLAG, instanceFlag } from '../instance-flag.ts';
import {
  informersSyncedCheck,
  logApiRequests,
  OPS_FLAGS,
  startOps,
  startTransactionController,
} from '../ops.ts';

const IN_CLUSTER_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export const CONTROLLER_FLAGS = {
  ...KUBE_FLAGS,
  ...LOG_FLAGS,
  ...OPS_FLAGS,
  namespace: {
    type: 'string',
    short: 'n',
    env: 'JANUS_WATCH_NAMESPACE',
    placeholder: 'namespace',
    description: 'reconcile Transactions in this namespace only (default: all namespaces)',
  },
  ...INSTANCE_FLAG,
  'controller-namespace': {
    type: 'string',
    env: 'JANUS_CONTROLLER_NAMESPACE',
    placeholder: 'namespace',
    description:
      "namespace of the leader-election Lease and of locks on cluster-scoped targets (default: the pod's namespace, else janus-system)",
  },
  concurrency: {
    type: 'string',
    env: 'JANUS_CONCURRENCY',
    default: '16',
    placeholder: 'n',
    description: 'Transactions reconciled in parallel',
  },
  prune: {
    type: 'boolean',
    env: 'JANUS_PRUNE',
    default: true,
    description:
      'delete finished Transactions (and their rollback stores) by the retention policy below (turn off with --no-prune or JANUS_PRUNE=false)',
  },
  'no-prune': {
    type: 'boolean',
    description: 'keep every finished Transaction (etcd use then grows with history)',
  },
  'retain-last': {
    type: 'string',
    env: 'JANUS_RETAIN_LAST',
    default: String(DEFAULT_RETENTION.keepLast),
    placeholder: 'n',
    description: 'finished Transactions kept per namespace whatever their age, the newest',
  },
  'retain-min-age': {
    type: 'string',
    env: 'JANUS_RETAIN_MIN_AGE',
    default: '1h',
    placeholder: 'duration',
    description: 'finished Transactions younger than this are kept',
  },
  'rollback-window': {
    type: 'string',
    env: 'JANUS_ROLLBACK_WINDOW',
    default: '168h',
    placeholder: 'duration',
    description: 'a Committed transaction is kept, so janus rollback can undo it by name, at least this long',
  },
  'prune-interval': {
    type: 'string',
    env: 'JANUS_PRUNE_INTERVAL',
    default: '1m',
    placeholder: 'duration',
    description: 'time between two retention sweeps (each deletes at most 100 Transactions)',
  },
  'leader-elect': {
    type: 'boolean',
    env: 'JANUS_LEADER_ELECT',
    default: true,
    description:
      'elect one active replica through a Lease (turn off with --no-leader-elect or JANUS_LEADER_ELECT=false)',
  },
  'no-leader-elect': { type: 'boolean', description: 'run without leader election (a single replica)' },
  'leader-election-id': {
    type: 'string',
    env: 'JANUS_LEADER_ELECTION_ID',
    placeholder: 'name',
    description:
      'name of the leader-election Lease in the controller namespace (default: janus-controller, or janus-controller-<instance> with --instance)',
  },
  'leader-lease-duration': {
    type: 'string',
    env: 'JANUS_LEADER_LEASE_DURATION',
    default: '15s',
    placeholder: 'duration',
    description: 'how long a standby waits before taking over from a leader that stopped renewing',
  },
  'leader-renew-deadline': {
    type: 'string',
    env: 'JANUS_LEADER_RENEW_DEADLINE',
    default: '10s',
    placeholder: 'duration',
    description: 'how long the leader keeps trying to renew before it stops acting',
  },
  'leader-retry-period': {
    type: 'string',
    env: 'JANUS_LEADER_RETRY_PERIOD',
    default: '2s',
    placeholder: 'duration',
    description: 'how often candidates try to acquire or renew the leader Lease',
  },
} as const;

export interface RetentionSettings {
  policy: RetentionPolicy;
  intervalMs: number;
}

/** The retention policy from the flags; undefined when pruning is off. */
export function retentionPolicy(values: {
  prune: boolean;
  'no-prune': boolean;
  'retain-last': string;
  'retain-min-age': string;
  'rollback-window': string;
  'prune-interval': string;
}): RetentionSettings | undefined {
  const keepLast = Number(values['retain-last']);
  if (!Number.isInteger(keepLast) || keepLast < 0)
    throw new UsageError(
      `--retain-last: expected a whole number (0 or more), got "${values['retain-last']}"`,
    );
  const ms = (flag: 'retain-min-age' | 'rollback-window' | 'prune-interval') =>
    durationFlag(values[flag], flag);
  const policy = { keepLast, minAgeMs: ms('retain-min-age'), rollbackWindowMs: ms('rollback-window') };
  const intervalMs = ms('prune-interval');
  if (intervalMs < 1000) throw new UsageError('--prune-interval: must be at least 1s');
  return values.prune && !values['no-prune'] ? { policy, intervalMs } : undefined;
}

export function leaderTimings(values: {
  'leader-lease-duration': string;
  'leader-renew-deadline': string;
  'leader-retry-period': string;
}): LeaderTimings {
  const ms = (flag: keyof typeof values) => durationFlag(values[flag], flag);
  const timings = {
    leaseDurationMs: Math.ceil(ms('leader-lease-duration') / 1000) * 1000,
    renewDeadlineMs: ms('leader-renew-deadline'),
    retryPeriodMs: ms('leader-retry-period'),
  };
  const problem = leaderTimingsProblem(timings);
  if (problem) {
    const flag = {
      leaseDurationMs: `--leader-lease-duration ${values['leader-lease-duration']}`,
      renewDeadlineMs: `--leader-renew-deadline ${values['leader-renew-deadline']}`,
      retryPeriodMs: `--leader-retry-period ${values['leader-retry-period']}`,
    }[problem.subject];
    throw new UsageError(
      `${flag}: ${problem.message} (lease duration ${values['leader-lease-duration']}, renew deadline ${values['leader-renew-deadline']}, retry period ${values['leader-retry-period']})`,
    );
  }
  return timings;
}

export function controllerNamespace(flag: string | undefined): string {
  if (flag) return flag;
  if (existsSync(IN_CLUSTER_NAMESPACE)) return readFileSync(IN_CLUSTER_NAMESPACE, 'utf8').trim();
  return 'janus-system';
}

export function loggerFor(level: string, name: string): Logger {
  if (!isLogLevel(level)) throw new UsageError(`--log-level: unknown level "${level}"`);
  return createLogger({ level, name, version: VERSION });
}

/** Runs `work` while this process leads (or always, without leader election) until a signal. */
export async function runUntilSignal(opts: {
  client: KubeClient;
  namespace: string;
  leaseName: string;
  leaderElect: boolean;
  timings: LeaderTimings;
  log: Logger;
  work(signal: AbortSignal): Promise<void>;
  onLeading?(leading: boolean): void;
}): Promise<void> {
  const stopping = new AbortController();
  const onSignal = (signal: string) => {
    opts.log.info({ signal }, 'shutting down: finishing the current steps');
    stopping.abort();
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
  if (!opts.leaderElect) {
    opts.onLeading?.(true);
    await opts.work(stopping.signal);
    return;
  }
  const elector = new LeaderElector({
    client: opts.client,
    namespace: opts.namespace,
    name: opts.leaseName,
    ...opts.timings,
    logger: opts.log,
    onStartedLeading: (term) => {
      opts.log.info('became leader');
      opts.onLeading?.(true);
      return opts.work(AbortSignal.any([term, stopping.signal]));
    },
    onStoppedLeading: () => {
      opts.log.info('stopped leading');
      opts.onLeading?.(false);
    },
  });
  elector.start();
  await new Promise<void>((resolve) =>
    stopping.signal.addEventListener('abort', () => resolve(), { once: true }),
  );
  await elector.stop();
}

export default defineCommand({
  name: 'controller',
  usage: 'janus controller [flags]',
  description: `
Watches Transaction resources (tx.janus.io/v1alpha1) and drives each through prepare, commit and,
when a change fails, rollback. Transactions created with kubectl run exactly like those from Git.

Uses the current kubeconfig, or the in-cluster configuration inside a pod. With more than one
replica, leader election on a Lease keeps exactly one active; a new leader finishes the
transactions the old one left in flight. SIGTERM finishes the current steps, then exits.

Several installations in one cluster: each started with its own --instance handles only the
Transactions labelled tx.janus.io/instance=<instance> (the one without: those without the label)
and leads under a Lease of its own; see docs/operations.md, Several installations.

Finished Transactions are pruned by the retention policy (--retain-last, --retain-min-age,
--rollback-window; docs/operations.md, Retention); one materialized from Git is kept, since only
janus run knows whether its outcome is on the results branch yet.

Exit status: 0 after a clean shutdown, 1 on a fatal error, 2 on a usage error.`,
  flags: CONTROLLER_FLAGS,
  async run(values) {
    // Every flag is checked before anything starts: a bad one is a usage error (exit 2).
    const log = loggerFor(values['log-level'], 'janus-controller');
    const timings = leaderTimings(values);
    const concurrency = positiveInt(values.concurrency, 'concurrency');
    const retention = retentionPolicy(values);
    const instance = instanceFlag(values.instance);
    const client = await KubeClient.load({
      kubeconfig: values.kubeconfig,
      context: values.context,
      userAgent: `janus-controller/${VERSION}`,
    });
    logApiRequests(client, log);
    const namespace = controllerNamespace(values['controller-namespace']);
    const leaseName = leaderElectionId(values['leader-election-id'], instance);
    const metrics = new Metrics({ defaultMetrics: true, leaderLease: `${namespace}/${leaseName}` });
    metrics.observeKubeRequests(client.connection);
    const leaderElect = values['leader-elect'] && !values['no-leader-elect'];
    let controller: TransactionController | undefined;
    const ops = await startOps({
      bindAddress: values['metrics-bind-address'],
      metrics,
      log,
      ready: [informersSyncedCheck(() => controller)],
    });
    await runUntilSignal({
      client,
      namespace,
      leaseName,
      leaderElect,
      timings,
      log,
      onLeading: (leading) => metrics.setLeader(leading),
      work: async (signal) => {
        const running = startTransactionController({
          client,
          controllerNamespace: namespace,
          watchNamespace: values.namespace,
          instance,
          concurrency,
          metrics,
          log,
          ...(retention && { retention: { ...retention, isRecorded: (txn) => !fromGit(txn) } }),
        });
        controller = running;
        await new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => resolve(), { once: true }),
        );
        await running.stop();
        controller = undefined;
      },
    });
    await ops?.close();
    await client.connection.close();
    return 0;
  },
});

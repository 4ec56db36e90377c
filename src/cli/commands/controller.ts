/** `janus controller`: the saga controller alone, for users who only want the CRD. */
import { existsSync, readFileSync } from 'node:fs';
import { TransactionController } from '../../controller/controller.ts';
import { KubeClient } from '../../kube/client.ts';
import { createLogger, isLogLevel, type Logger } from '../../log/index.ts';
import { LeaderElector } from '../../runtime/leader-election.ts';
import { VERSION } from '../../version.ts';
import { defineCommand, KUBE_FLAGS, LOG_FLAGS, positiveInt, UsageError } from '../command.ts';

const IN_CLUSTER_NAMESPACE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export const CONTROLLER_FLAGS = {
  ...KUBE_FLAGS,
  ...LOG_FLAGS,
  namespace: {
    type: 'string',
    short: 'n',
    env: 'JANUS_WATCH_NAMESPACE',
    placeholder: 'namespace',
    description: 'reconcile Transactions in this namespace only (default: all namespaces)',
  },
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
  'leader-elect': {
    type: 'boolean',
    env: 'JANUS_LEADER_ELECT',
    default: true,
    description:
      'elect one active replica through a Lease (turn off with --no-leader-elect or JANUS_LEADER_ELECT=false)',
  },
  'no-leader-elect': { type: 'boolean', description: 'run without leader election (a single replica)' },
} as const;

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
  log: Logger;
  work(signal: AbortSignal): Promise<void>;
}): Promise<void> {
  const stopping = new AbortController();
  const onSignal = (signal: string) => {
    opts.log.info({ signal }, 'shutting down: finishing the current steps');
    stopping.abort();
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));
  if (!opts.leaderElect) {
    await opts.work(stopping.signal);
    return;
  }
  const elector = new LeaderElector({
    client: opts.client,
    namespace: opts.namespace,
    name: opts.leaseName,
    logger: opts.log,
    onStartedLeading: (term) => {
      opts.log.info('became leader');
      return opts.work(AbortSignal.any([term, stopping.signal]));
    },
    onStoppedLeading: () => opts.log.info('stopped leading'),
  });
  elector.start();
  await new Promise<void>((resolve) =>
    stopping.signal.addEventListener('abort', () => resolve(), { once: true }),
  );
  await elector.stop();
}

export default defineCommand({
  name: 'controller',
  summary: 'run the saga controller alone (no Git side)',
  usage: 'janus controller [flags]',
  description: `
Watches Transaction resources (tx.janus.io/v1alpha1) and drives each through prepare, commit and,
when a change fails, rollback. Transactions created with kubectl run exactly like those from Git.

Uses the current kubeconfig, or the in-cluster configuration inside a pod. With more than one
replica, leader election on a Lease keeps exactly one active; a new leader finishes the
transactions the old one left in flight. SIGTERM finishes the current steps, then exits.

Exit status: 0 after a clean shutdown, 1 on a fatal error, 2 on a usage error.`,
  flags: CONTROLLER_FLAGS,
  async run(values) {
    const log = loggerFor(values['log-level'], 'janus-controller');
    const client = await KubeClient.load({
      kubeconfig: values.kubeconfig,
      context: values.context,
      userAgent: `janus-controller/${VERSION}`,
    });
    if (log.isLevelEnabled('debug')) {
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
    const namespace = controllerNamespace(values['controller-namespace']);
    const concurrency = positiveInt(values.concurrency, 'concurrency');
    await runUntilSignal({
      client,
      namespace,
      leaseName: 'janus-controller',
      leaderElect: values['leader-elect'] && !values['no-leader-elect'],
      log,
      work: async (signal) => {
        const controller = new TransactionController({
          client,
          controllerNamespace: namespace,
          watchNamespace: values.namespace,
          concurrency,
          log,
        });
        controller.start();
        log.info({ namespace: values.namespace ?? '(all)', concurrency }, 'controller started');
        await new Promise<void>((resolve) =>
          signal.addEventListener('abort', () => resolve(), { once: true }),
        );
        await controller.stop();
      },
    });
    await client.connection.close();
    return 0;
  },
});

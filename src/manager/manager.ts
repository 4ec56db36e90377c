/**
 * The manager: runs one Janus process from checked options until SIGTERM or SIGINT. It connects
 * to the API server, starts the Transaction cache and the listeners every replica serves
 * (planRunnables), and, while this replica leads, the saga controller, the notifier and (for
 * janus run) the Git side, all following that one cache; a signal ends the term (current steps
 * finished, Lease released), then the cache, the listeners and the connections close.
 *
 * The cache lives as long as the process, as controller-runtime's does, not for a term: a
 * standby that wins the Lease starts with every Transaction listed and watched, so a failover
 * over thousands of Transactions does not wait for them to be listed again, and a term that ends
 * and begins again in one process lists nothing. What that costs: a standby holds the cache and
 * one watch as the leader does (its LIST at start, no more); it acts on none of it.
 */
import type { TransactionController } from '../controller/controller.ts';
import { type TransactionCache, transactionInformer } from '../controller/transaction-cache.ts';
import type { GitSide } from '../gitops/git-side.ts';
import { KubeClient } from '../kube/client.ts';
import { Metrics } from '../metrics/index.ts';
import { NotifyConfigFile } from '../notify/config-file.ts';
import type { Notifier } from '../notify/notifier.ts';
import { fromGit } from '../retention/select.ts';
import { logApiRequests } from './api-request-log.ts';
import type { GitSource } from './git-source.ts';
import { InstanceClaims } from './instance-claims.ts';
import { leadUntil } from './leadership.ts';
import { startListeners } from './listeners.ts';
import { startNotifier } from './notifications.ts';
import type { ManagerOptions } from './options.ts';
import { readinessChecks } from './readiness.ts';
import { planRunnables, type RunnablePlan } from './runnables.ts';
import { aborted, shutdownSignal } from './signals.ts';
import { startTransactionController } from './transaction-controller.ts';

/** What runs while this replica leads. */
interface Term {
  controller: TransactionController;
  git: GitSide | undefined;
  notifier: Notifier | undefined;
}

/** Runs until a signal, then shuts down cleanly; rejects on a fatal error. */
export async function runManager(o: ManagerOptions): Promise<void> {
  const plan = planRunnables(o);
  const { log } = o;
  const client = await KubeClient.load(o.kube);
  logApiRequests(client, log);
  // Listened for before the claim is written: a SIGTERM while the process starts (Node's default
  // would end it at once) then stops it cleanly, releasing the claim, instead of leaving it
  // fresh for a lease in which no successor in another namespace may start.
  const stopping = shutdownSignal(log);
  // Before anything else: another installation of this instance in another namespace stops this one here.
  let claims: InstanceClaims;
  try {
    claims = await InstanceClaims.acquire({
      client,
      installation: {
        controllerNamespace: o.controllerNamespace,
        instance: o.instance,
        watchNamespace: o.watchNamespace,
      },
      log,
      signal: stopping,
    });
  } catch (error) {
    await client.connection.close();
    throw error;
  }
  const leaseName = o.leaderElection.leaseName;
  const metrics = new Metrics({ defaultMetrics: true, leaderLease: `${o.controllerNamespace}/${leaseName}` });
  metrics.observeKubeRequests(client.connection);
  // Loaded only for janus run: janus controller stays free of the Git code.
  const source =
    o.git && (await (await import('./git-source.ts')).openGitSource(o.git, { ...o, client, metrics }));

  const transactions = transactionInformer({
    client,
    watchNamespace: o.watchNamespace,
    instance: o.instance,
    log,
  });
  transactions.start();

  const notifications = o.notificationsConfig
    ? new NotifyConfigFile(o.notificationsConfig, log.child({ component: 'notifier' }))
    : undefined;
  let term: Term | undefined;
  const webhook =
    plan.webhook === 'off' ? undefined : source?.webhook((reason) => term?.git?.poller.trigger(reason));
  const listeners = await startListeners({
    plan,
    opsAddress: o.opsAddress,
    webhookAddress: o.git?.webhook?.address,
    metrics,
    ready: readinessChecks(plan.readiness, () => term),
    webhook,
    log,
  });

  // A term that cannot start ends the process, as a failed runnable ends controller-runtime's
  // manager: a leader that kept its Lease without its Git side would look ready and do nothing.
  const failed = new AbortController();
  let failure: unknown;
  claims.start((error) => {
    failure = error;
    failed.abort();
  });
  // Asked to stop while starting: nothing to lead; the claim is released below.
  if (!stopping.aborted)
    await leadUntil(AbortSignal.any([stopping, failed.signal]), {
      client,
      namespace: o.controllerNamespace,
      election: o.leaderElection,
      log,
      onLeading: (leading) => metrics.setLeader(leading),
      work: async (signal) => {
        let started: Term;
        try {
          started = await startTerm(
            o,
            plan,
            { client, cache: transactions, metrics, source, notifications, claims, current: () => term },
            signal,
          );
        } catch (error) {
          failure = error;
          failed.abort();
          throw error;
        }
        term = started;
        await aborted(signal);
        term = undefined;
        await started.git?.stop();
        await started.notifier?.stop();
        await started.controller.stop();
      },
    });
  await transactions.stop();
  await listeners?.close();
  await source?.repository.idle();
  await claims.release();
  await client.connection.close();
  if (failure !== undefined) throw failure;
}

/** Starts the leader's runnables in order: the controller, the notifier, then the Git side. */
async function startTerm(
  o: ManagerOptions,
  plan: RunnablePlan,
  deps: {
    client: KubeClient;
    cache: TransactionCache;
    metrics: Metrics;
    source: GitSource | undefined;
    notifications: NotifyConfigFile | undefined;
    claims: InstanceClaims;
    current(): Term | undefined;
  },
  signal: AbortSignal,
): Promise<Term> {
  const { client, cache, metrics, source } = deps;
  const { retention } = plan;
  const controller = startTransactionController({
    client,
    cache,
    controllerNamespace: o.controllerNamespace,
    watchNamespace: o.watchNamespace,
    instance: o.instance,
    concurrency: o.concurrency,
    analysis: o.analysis,
    sopsKinds: o.sopsKinds,
    isLiveInstallation: (namespace) => deps.claims.isLive(namespace),
    metrics,
    log: o.log,
    ...(o.retention &&
      retention !== 'off' && {
        retention: {
          ...o.retention,
          // A Transaction from Git is pruned only once this term's reporter has pushed its outcome.
          isRecorded: (txn) =>
            !fromGit(txn) ||
            (retention === 'once-recorded' && (deps.current()?.git?.isRecorded(txn) ?? false)),
        },
      }),
  });
  const notifier =
    deps.notifications &&
    startNotifier(o, { client, cache, metrics, config: deps.notifications, repository: source?.repository });
  try {
    const hooks = notifier && {
      onResultWritten: notifier.recordWritten.bind(notifier),
      onDrift: notifier.drifted.bind(notifier),
    };
    const git = plan.whileLeading.includes('git-side')
      ? await source?.startTerm(signal, cache, hooks)
      : undefined;
    return { controller, git, notifier };
  } catch (error) {
    await notifier?.stop();
    await controller.stop();
    throw error;
  }
}

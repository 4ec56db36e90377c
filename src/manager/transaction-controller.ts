/** The saga controller as a runnable of the leader: started when a term begins. */

import type { AnalysisPolicy } from '../analysis/index.ts';
import { sopsKindNames } from '../changes/sops-kinds.ts';
import { type ControllerMetrics, TransactionController } from '../controller/controller.ts';
import { transactionSelector } from '../controller/installation.ts';
import type { TransactionCache } from '../controller/transaction-cache.ts';
import type { KubeClient } from '../kube/client.ts';
import type { Logger } from '../log/index.ts';
import type { Metrics } from '../metrics/index.ts';
import type { RetentionOptions } from '../retention/pruner.ts';

/** The controller's view of the metrics registry. */
function controllerMetrics(metrics: Metrics): ControllerMetrics {
  return {
    ...metrics,
    transition: metrics.transition,
    transactionFinished: metrics.transactionFinished,
    itemOperation: metrics.itemOperation,
    itemCount: metrics.itemCount,
    healthCheck: metrics.healthCheck,
    installationConflict: metrics.installationConflict,
    lockOperation: metrics.lockOperation,
    activeTransactions: metrics.setActiveTransactions,
    reconcile: metrics.reconcile,
    workQueue: metrics.workQueueMetrics('transactions'),
    measurements: metrics.measurementSlots,
  };
}

/** Starts the saga controller on the leader: reconciles Transactions until stopped. */
export function startTransactionController(opts: {
  client: KubeClient;
  /** The process's Transaction cache (of this instance, in `watchNamespace`). */
  cache: TransactionCache;
  controllerNamespace: string;
  watchNamespace: string | undefined;
  /** This installation's instance (src/controller/installation.ts); undefined: the default one. */
  instance: string | undefined;
  concurrency: number;
  /** What metric analysis may query and read. */
  analysis: AnalysisPolicy;
  /** Kinds besides Secret SOPS content may be applied to. */
  sopsKinds: readonly string[];
  /** Whether an installation in this namespace holds a live claim on this instance. */
  isLiveInstallation: (namespace: string) => boolean;
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
      analysisAllowedAddresses: opts.analysis.allowedAddresses.map((a) => a.text),
      analysisTemplateNamespaces: opts.analysis.templateNamespaces,
      sopsKinds: sopsKindNames(opts.sopsKinds),
    },
    'controller started',
  );
  return controller;
}

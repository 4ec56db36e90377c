/**
 * `janus run`: the main job. The saga controller, the Git poller and materializer, and the
 * results reporter, all under one leader election: only the leader polls, materializes,
 * reconciles and writes results. The operations server (metrics, probes, webhook) runs on every
 * replica; a webhook reaching a standby is acknowledged and does nothing.
 */
import { readFile } from 'node:fs/promises';
import type { TransactionController } from '../../controller/controller.ts';
import { leaderElectionId } from '../../controller/installation.ts';
import {
  type CredentialsProvider,
  credentialsProvider,
  formatBytes,
  GitRepository,
  type SecretSource,
} from '../../git/index.ts';
import { type GitSide, startGitSide } from '../../gitops/git-side.ts';
import { describePolicy } from '../../gitops/policy.ts';
import { KubeClient } from '../../kube/client.ts';
import type { Logger } from '../../log/index.ts';
import { Metrics } from '../../metrics/index.ts';
import type { ResultContext } from '../../results/result-context.ts';
import { fromGit } from '../../retention/select.ts';
import { VERSION } from '../../version.ts';
import { createWebhookHandler } from '../../webhook/index.ts';
import { defineCommand, positiveInt, UsageError } from '../command.ts';
import { instanceFlag } from '../instance-flag.ts';
import { informersSyncedCheck, logApiRequests, startOps, startTransactionController } from '../ops.ts';
import { gitSettings, RUN_FLAGS } from '../run-settings.ts';
import {
  controllerNamespace,
  leaderTimings,
  loggerFor,
  retentionPolicy,
  runUntilSignal,
} from './controller.ts';

export default defineCommand({
  name: 'run',
  usage: 'janus run --repo <https-url|path> [flags]',
  description: `
Watches a branch of a Git repository for transaction directories (transactions/<name>/), turns
each new one into a Transaction exactly once, drives it as a saga, and commits every outcome to
the results branch, so that \`git log janus/results\` is the audit trail. See docs/git.md.

A repository may use only what its policy grants: the namespaces of --allowed-namespaces (unset:
--default-namespace alone) and the ServiceAccounts of --allowed-service-accounts (unset: none, so
every directory is refused until one is named). The controller's namespace and kube-* never. A
directory that uses anything else is refused and reported on the results branch, file and line.

A webhook from the Git host (POST /webhook on the operations server, or on a listener of its
own with --webhook-bind-address; see docs/webhooks.md) triggers an immediate poll, and so does
janus poll; polling continues regardless. janus suspend stops it until janus resume. With more
than one replica, leader election keeps exactly one active.

Finished Transactions are pruned by the retention policy (--retain-last, --retain-min-age,
--rollback-window; docs/operations.md, Retention), one from Git only once its outcome is on the
results branch, which stays the permanent record (janus history).

Several installations in one cluster: each started with its own --instance handles only the
Transactions labelled tx.janus.io/instance=<instance> (the one without: those without the label),
labels those it creates from Git so, and leads under a Lease and keeps a Git cursor of its own;
see docs/operations.md, Several installations.

What a repository can cost is bounded: one fetch (--max-fetch-bytes), each file (1 MiB, checked
before it is inflated), the YAML in it (nesting, aliases, errors), each tree (--max-tree-bytes,
checked before it is parsed), and what one poll reads (--max-poll-directories, --max-poll-bytes;
later commits wait for the next poll); see docs/git.md, Limits.
Credentials are never sent over plain http:// unless --allow-insecure-http says so.

Exit status: 0 after a clean shutdown, 1 on a fatal error, 2 on a usage error.`,
  flags: RUN_FLAGS,
  async run(values) {
    const settings = gitSettings(values);
    const log = loggerFor(values['log-level'], 'janus');
    const concurrency = positiveInt(values.concurrency, 'concurrency');
    const retention = retentionPolicy(values);
    const instance = instanceFlag(values.instance);
    const timings = leaderTimings(values);
    const webhookSecret = settings.webhookSecret && (await readWebhookSecret(settings.webhookSecret));
    const client = await KubeClient.load({
      kubeconfig: values.kubeconfig,
      context: values.context,
      userAgent: `janus/${VERSION}`,
    });
    logApiRequests(client, log);
    const namespace = controllerNamespace(values['controller-namespace']);
    const leaseName = leaderElectionId(values['leader-election-id'], instance);
    const metrics = new Metrics({ defaultMetrics: true, leaderLease: `${namespace}/${leaseName}` });
    metrics.observeKubeRequests(client.connection);
    const repository = await GitRepository.open({
      location: settings.repo,
      cacheDir: settings.cacheDir,
      ...(settings.credentials && { credentials: gitCredentials(settings.credentials, settings.username) }),
      maxFetchBytes: settings.maxFetchBytes,
      maxTreeBytes: settings.maxTreeBytes,
      logger: log,
    });
    const context: ResultContext = { controllerVersion: VERSION, identity: await whoAmI(client, log) };
    log.info(
      {
        repository: repository.display,
        branch: settings.branch,
        root: settings.root,
        resultsBranch: settings.resultsBranch,
        pollInterval: values['poll-interval'],
        initial: settings.initial,
        policy: describePolicy(settings.policy),
        webhook: webhookSecret !== undefined,
        maxFetchBytes: settings.maxFetchBytes === 0 ? 'unlimited' : formatBytes(settings.maxFetchBytes),
        ...(settings.credentials &&
          'file' in settings.credentials && { gitTokenFile: settings.credentials.file }),
        ...(settings.credentials &&
          'env' in settings.credentials && { gitTokenEnvName: settings.credentials.env }),
      },
      'janus run starting',
    );
    if (settings.insecureHttp) {
      log.warn(
        { repository: repository.display },
        'the Git credentials are sent over plain http:// (--allow-insecure-http): anyone on the network path can read them, and change what Janus fetches',
      );
    }
    if (settings.policy.serviceAccounts.length === 0) {
      log.warn(
        'no ServiceAccount is allowed (--allowed-service-accounts, JANUS_ALLOWED_SERVICE_ACCOUNTS): every transaction directory will be refused',
      );
    }

    let term: { controller: TransactionController; git: GitSide } | undefined;
    const webhook =
      webhookSecret === undefined
        ? undefined
        : createWebhookHandler({
            secret: webhookSecret,
            branch: settings.branch,
            onTrigger: (trigger) => term?.git.poller.trigger(`webhook ${trigger.provider}`),
            logger: log,
            onResult: metrics.webhookRequest,
          });
    const ops = await startOps({
      bindAddress: values['metrics-bind-address'],
      metrics,
      log,
      ...(webhook && { webhook }),
      ...(settings.webhookBindAddress !== undefined && { webhookBindAddress: settings.webhookBindAddress }),
      ready: [
        informersSyncedCheck(() => term?.controller),
        {
          name: 'git-reachable',
          check: () => (term ? term.git.readiness() : { ok: true, detail: 'standby' }),
        },
      ],
    });

    await runUntilSignal({
      client,
      namespace,
      leaseName,
      leaderElect: values['leader-elect'] && !values['no-leader-elect'],
      timings,
      log,
      onLeading: (leading) => metrics.setLeader(leading),
      work: async (signal) => {
        const controller = startTransactionController({
          client,
          controllerNamespace: namespace,
          watchNamespace: values.namespace,
          instance,
          concurrency,
          metrics,
          log,
          // A Transaction from Git is pruned only once this term's reporter has pushed its outcome.
          ...(retention && {
            retention: {
              ...retention,
              isRecorded: (txn) => !fromGit(txn) || (term?.git.isRecorded(txn) ?? false),
            },
          }),
        });
        const git = await startGitSide(
          {
            client,
            repository,
            branch: settings.branch,
            root: settings.root,
            resultsBranch: settings.resultsBranch,
            parse: { policy: settings.policy },
            budget: settings.budget,
            initial: settings.initial,
            pollIntervalMs: settings.pollIntervalMs,
            controllerNamespace: namespace,
            watchNamespace: values.namespace,
            instance,
            context,
            metrics,
            log,
          },
          signal,
        );
        term = { controller, git };
        log.info({ repository: repository.display, branch: settings.branch }, 'watching the repository');
        await aborted(signal);
        term = undefined;
        await git.stop();
        await controller.stop();
      },
    });
    await ops?.close();
    await repository.idle();
    await client.connection.close();
    return 0;
  },
});

function gitCredentials(secret: SecretSource, username: string | undefined): CredentialsProvider {
  return credentialsProvider({ secret, ...(username !== undefined && { username }) });
}

async function readWebhookSecret(source: SecretSource): Promise<string> {
  let value: string | undefined;
  if ('file' in source) {
    try {
      value = await readFile(source.file, 'utf8');
    } catch (e) {
      throw new UsageError(
        `--webhook-secret-file: cannot read ${source.file} (${(e as NodeJS.ErrnoException).code ?? e})`,
      );
    }
  } else value = process.env[source.env];
  const secret = value?.replace(/\r?\n$/, '') ?? '';
  if (secret === '')
    throw new UsageError(`the webhook secret in ${'file' in source ? source.file : source.env} is empty`);
  return secret;
}

/** Who writes the results: the Kubernetes user Janus runs as, stable across restarts. */
async function whoAmI(client: KubeClient, log: Logger): Promise<string> {
  try {
    const review = await client.request<{ status?: { userInfo?: { username?: string } } }>({
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
    });
    return review.status?.userInfo?.username ?? 'janus';
  } catch (error) {
    log.warn({ err: error }, 'cannot tell which Kubernetes user Janus runs as; results name "janus"');
    return 'janus';
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

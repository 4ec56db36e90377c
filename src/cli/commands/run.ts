/**
 * `janus run`: the main job. The saga controller, the Git poller and materializer, and the
 * results reporter, all under one leader election: only the leader polls, materializes,
 * reconciles and writes results. The operations server (metrics, probes, webhook) runs on every
 * replica; a webhook reaching a standby is acknowledged and does nothing.
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseDuration } from '../../api/duration.ts';
import type { TransactionController } from '../../controller/controller.ts';
import {
  type CredentialsProvider,
  credentialsProvider,
  DEFAULT_MAX_FETCH_BYTES,
  describeSecretSource,
  formatBytes,
  GitRepository,
  redactUrl,
  type SecretSource,
} from '../../git/index.ts';
import { startGitSide } from '../../gitops/git-side.ts';
import type { PollSummary } from '../../gitops/materializer.ts';
import { describePolicy, type RepositoryPolicy } from '../../gitops/policy.ts';
import type { Poller } from '../../gitops/poller.ts';
import { KubeClient } from '../../kube/client.ts';
import type { Logger } from '../../log/index.ts';
import { Metrics } from '../../metrics/index.ts';
import type { ResultContext } from '../../results/result-context.ts';
import { VERSION } from '../../version.ts';
import { createWebhookHandler } from '../../webhook/index.ts';
import { parseByteSize } from '../byte-size.ts';
import {
  defineCommand,
  policyFromFlags,
  positiveInt,
  TRANSACTION_DIRECTORY_FLAGS,
  UsageError,
  type Values,
} from '../command.ts';
import {
  informersSyncedCheck,
  logApiRequests,
  parseBindAddress,
  startOps,
  startTransactionController,
} from '../ops.ts';
import {
  CONTROLLER_FLAGS,
  controllerNamespace,
  leaderTimings,
  loggerFor,
  runUntilSignal,
} from './controller.ts';

export const RUN_FLAGS = {
  ...CONTROLLER_FLAGS,
  repo: {
    type: 'string',
    env: 'JANUS_REPO',
    placeholder: 'url|path',
    description: 'the Git repository: an https:// URL, or a local path (required)',
  },
  branch: {
    type: 'string',
    env: 'JANUS_BRANCH',
    default: 'main',
    placeholder: 'name',
    description: 'the watched branch: directories that land on it are applied',
  },
  'results-branch': {
    type: 'string',
    env: 'JANUS_RESULTS_BRANCH',
    default: 'janus/results',
    placeholder: 'name',
    description: 'branch the outcomes are committed to (its own history; never force-pushed)',
  },
  ...TRANSACTION_DIRECTORY_FLAGS,
  'poll-interval': {
    type: 'string',
    env: 'JANUS_POLL_INTERVAL',
    default: '30s',
    placeholder: 'duration',
    description: 'time between polls of the watched branch (±10% jitter); webhooks poll at once',
  },
  initial: {
    type: 'string',
    env: 'JANUS_INITIAL',
    default: 'baseline',
    placeholder: 'baseline|apply',
    description:
      'first run on a repository with no results branch: record existing directories without applying them (baseline), or apply them (apply)',
  },
  'git-username': {
    type: 'string',
    env: 'JANUS_GIT_USERNAME',
    placeholder: 'name',
    description: 'user name for HTTPS basic auth (default x-access-token; GitLab: oauth2)',
  },
  'git-token-file': {
    type: 'string',
    env: 'JANUS_GIT_TOKEN_FILE',
    placeholder: 'path',
    description: 'file holding the HTTPS token or password, re-read on each use (or set JANUS_GIT_TOKEN)',
  },
  'allow-insecure-http': {
    type: 'boolean',
    env: 'JANUS_ALLOW_INSECURE_HTTP',
    description:
      'send the Git credentials to an http:// repository, in clear text (refused without it; only for a trusted network)',
  },
  'max-fetch-bytes': {
    type: 'string',
    env: 'JANUS_MAX_FETCH_BYTES',
    default: `${DEFAULT_MAX_FETCH_BYTES / 1024 / 1024}Mi`,
    placeholder: 'size',
    description:
      'most one fetch from the repository may download (e.g. 64Mi, 1Gi); a larger fetch is stopped and retried at the next poll. 0: no limit',
  },
  'webhook-secret-file': {
    type: 'string',
    env: 'JANUS_WEBHOOK_SECRET_FILE',
    placeholder: 'path',
    description: 'file holding the webhook secret (or set JANUS_WEBHOOK_SECRET); without one /webhook is off',
  },
  'webhook-bind-address': {
    type: 'string',
    env: 'JANUS_WEBHOOK_BIND_ADDRESS',
    placeholder: 'host:port',
    description:
      'serve /webhook on a listener of its own, and nothing else there (unset: on --metrics-bind-address); needs a webhook secret',
  },
  'cache-dir': {
    type: 'string',
    env: 'JANUS_CACHE_DIR',
    placeholder: 'path',
    description:
      'Git cache and results not yet pushed (default ~/.cache/janus; /var/cache/janus in the image)',
  },
} as const;

export type RunValues = Values<typeof RUN_FLAGS>;

/** The Git side of the settings, checked. */
export interface GitSettings {
  repo: string;
  branch: string;
  root: string;
  resultsBranch: string;
  /** What the repository may use: namespaces, ServiceAccounts; its default namespace. */
  policy: RepositoryPolicy;
  pollIntervalMs: number;
  initial: 'baseline' | 'apply';
  cacheDir: string;
  credentials: SecretSource | undefined;
  username: string | undefined;
  webhookSecret: SecretSource | undefined;
  /** Where /webhook is served on its own; undefined: on the operations listener. */
  webhookBindAddress: string | undefined;
  /** What one fetch may download; 0: no limit. */
  maxFetchBytes: number;
  /** Credentials go to an http:// repository (allowed by --allow-insecure-http): warn about it. */
  insecureHttp: boolean;
}

/** Checks the Git flags; every problem is a UsageError naming its flag. */
export function gitSettings(values: RunValues, env: NodeJS.ProcessEnv = process.env): GitSettings {
  if (!values.repo)
    throw new UsageError('--repo (or JANUS_REPO) is required: an https:// URL or a local path');
  const policy = policyFromFlags(values, controllerNamespace(values['controller-namespace']));
  let pollIntervalMs: number;
  try {
    pollIntervalMs = parseDuration(values['poll-interval']);
  } catch (e) {
    throw new UsageError(`--poll-interval: ${(e as Error).message}`);
  }
  if (pollIntervalMs < 1000) throw new UsageError('--poll-interval: must be at least 1s');
  const initial = values.initial;
  if (initial !== 'baseline' && initial !== 'apply') {
    throw new UsageError(`--initial: expected baseline or apply, got "${initial}"`);
  }
  if (values['results-branch'] === values.branch) {
    throw new UsageError(
      '--results-branch must differ from --branch: results never go to the watched branch',
    );
  }
  const tokenFile = values['git-token-file'];
  const credentials: SecretSource | undefined = tokenFile
    ? { file: tokenFile }
    : env.JANUS_GIT_TOKEN
      ? { env: 'JANUS_GIT_TOKEN' }
      : undefined;
  if (values['git-username'] && !credentials) {
    throw new UsageError('--git-username needs a token: --git-token-file or JANUS_GIT_TOKEN');
  }
  const insecureHttp = credentials !== undefined && /^http:\/\//i.test(values.repo);
  if (insecureHttp && !values['allow-insecure-http']) {
    throw new UsageError(
      `--repo ${redactUrl(values.repo)} is plain http:// and Git credentials are configured (${describeSecretSource(credentials)}): they would cross the network in clear text. Use https://, or pass --allow-insecure-http (JANUS_ALLOW_INSECURE_HTTP=true) on a network you trust`,
    );
  }
  const maxFetchBytes = parseByteSize(values['max-fetch-bytes'], 'max-fetch-bytes');
  const secretFile = values['webhook-secret-file'];
  const webhookSecret: SecretSource | undefined = secretFile
    ? { file: secretFile }
    : env.JANUS_WEBHOOK_SECRET
      ? { env: 'JANUS_WEBHOOK_SECRET' }
      : undefined;
  const webhookBindAddress = values['webhook-bind-address'];
  if (webhookBindAddress !== undefined) {
    if (!webhookSecret) {
      throw new UsageError(
        '--webhook-bind-address needs a webhook secret (--webhook-secret-file or JANUS_WEBHOOK_SECRET): without one there is no /webhook to serve',
      );
    }
    if (!parseBindAddress(webhookBindAddress, 'webhook-bind-address')) {
      throw new UsageError(
        '--webhook-bind-address: expected host:port or :port; leave it unset to serve /webhook with the metrics',
      );
    }
  }
  return {
    repo: values.repo,
    branch: values.branch,
    root: values.root.replace(/^\/+|\/+$/g, ''),
    resultsBranch: values['results-branch'],
    policy,
    pollIntervalMs,
    initial,
    cacheDir: values['cache-dir'] ?? join(homedir(), '.cache', 'janus'),
    credentials,
    username: values['git-username'],
    webhookSecret,
    webhookBindAddress,
    maxFetchBytes,
    insecureHttp,
  };
}

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
own with --webhook-bind-address; see docs/webhooks.md) triggers an immediate poll; polling
continues regardless. With more than one replica, leader election keeps exactly one active.

What a repository can cost is bounded: one fetch (--max-fetch-bytes), each file (1 MiB, checked
before it is inflated), and the YAML in it (nesting, aliases, errors); see docs/git.md, Limits.
Credentials are never sent over plain http:// unless --allow-insecure-http says so.

Exit status: 0 after a clean shutdown, 1 on a fatal error, 2 on a usage error.`,
  flags: RUN_FLAGS,
  async run(values) {
    const settings = gitSettings(values);
    const log = loggerFor(values['log-level'], 'janus');
    const concurrency = positiveInt(values.concurrency, 'concurrency');
    const timings = leaderTimings(values);
    const webhookSecret = settings.webhookSecret && (await readWebhookSecret(settings.webhookSecret));
    const client = await KubeClient.load({
      kubeconfig: values.kubeconfig,
      context: values.context,
      userAgent: `janus/${VERSION}`,
    });
    logApiRequests(client, log);
    const namespace = controllerNamespace(values['controller-namespace']);
    const metrics = new Metrics({ defaultMetrics: true });
    metrics.observeKubeRequests(client.connection);
    const repository = await GitRepository.open({
      location: settings.repo,
      cacheDir: settings.cacheDir,
      ...(settings.credentials && { credentials: gitCredentials(settings.credentials, settings.username) }),
      maxFetchBytes: settings.maxFetchBytes,
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

    let term: { controller: TransactionController; poller: Poller<PollSummary> } | undefined;
    const webhook =
      webhookSecret === undefined
        ? undefined
        : createWebhookHandler({
            secret: webhookSecret,
            branch: settings.branch,
            onTrigger: (trigger) => term?.poller.trigger(`webhook ${trigger.provider}`),
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
          check: () => (term ? term.poller.readiness() : { ok: true, detail: 'standby' }),
        },
      ],
    });

    await runUntilSignal({
      client,
      namespace,
      leaseName: values['leader-election-id'],
      leaderElect: values['leader-elect'] && !values['no-leader-elect'],
      timings,
      log,
      onLeading: (leading) => metrics.setLeader(leading),
      work: async (signal) => {
        const controller = startTransactionController({
          client,
          controllerNamespace: namespace,
          watchNamespace: values.namespace,
          concurrency,
          metrics,
          log,
        });
        const git = await startGitSide(
          {
            client,
            repository,
            branch: settings.branch,
            root: settings.root,
            resultsBranch: settings.resultsBranch,
            parse: { policy: settings.policy },
            initial: settings.initial,
            pollIntervalMs: settings.pollIntervalMs,
            controllerNamespace: namespace,
            watchNamespace: values.namespace,
            context,
            metrics,
            log,
          },
          signal,
        );
        term = { controller, poller: git.poller };
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

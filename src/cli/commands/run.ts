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
  GitRepository,
  type SecretSource,
} from '../../git/index.ts';
import { startGitSide } from '../../gitops/git-side.ts';
import type { PollSummary } from '../../gitops/materializer.ts';
import { dnsLabelProblem } from '../../gitops/names.ts';
import type { Poller } from '../../gitops/poller.ts';
import { KubeClient } from '../../kube/client.ts';
import type { Logger } from '../../log/index.ts';
import { Metrics } from '../../metrics/index.ts';
import type { ResultContext } from '../../results/result-context.ts';
import { VERSION } from '../../version.ts';
import { createWebhookHandler } from '../../webhook/index.ts';
import {
  defineCommand,
  positiveInt,
  TRANSACTION_DIRECTORY_FLAGS,
  UsageError,
  type Values,
} from '../command.ts';
import { informersSyncedCheck, logApiRequests, startOps, startTransactionController } from '../ops.ts';
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
  'webhook-secret-file': {
    type: 'string',
    env: 'JANUS_WEBHOOK_SECRET_FILE',
    placeholder: 'path',
    description: 'file holding the webhook secret (or set JANUS_WEBHOOK_SECRET); without one /webhook is off',
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
  defaultNamespace: string;
  allowedNamespaces: string[] | undefined;
  pollIntervalMs: number;
  initial: 'baseline' | 'apply';
  cacheDir: string;
  credentials: SecretSource | undefined;
  username: string | undefined;
  webhookSecret: SecretSource | undefined;
}

/** Checks the Git flags; every problem is a UsageError naming its flag. */
export function gitSettings(values: RunValues, env: NodeJS.ProcessEnv = process.env): GitSettings {
  if (!values.repo)
    throw new UsageError('--repo (or JANUS_REPO) is required: an https:// URL or a local path');
  const namespaceFlag = (flag: string, value: string) => {
    const problem = dnsLabelProblem(value);
    if (problem) throw new UsageError(`--${flag}: "${value}" ${problem}`);
    return value;
  };
  const allowed = values['allowed-namespaces']
    ?.split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '')
    .map((n) => namespaceFlag('allowed-namespaces', n));
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
  const secretFile = values['webhook-secret-file'];
  return {
    repo: values.repo,
    branch: values.branch,
    root: values.root.replace(/^\/+|\/+$/g, ''),
    resultsBranch: values['results-branch'],
    defaultNamespace: namespaceFlag('default-namespace', values['default-namespace']),
    allowedNamespaces: allowed,
    pollIntervalMs,
    initial,
    cacheDir: values['cache-dir'] ?? join(homedir(), '.cache', 'janus'),
    credentials,
    username: values['git-username'],
    webhookSecret: secretFile
      ? { file: secretFile }
      : env.JANUS_WEBHOOK_SECRET
        ? { env: 'JANUS_WEBHOOK_SECRET' }
        : undefined,
  };
}

export default defineCommand({
  name: 'run',
  usage: 'janus run --repo <https-url|path> [flags]',
  description: `
Watches a branch of a Git repository for transaction directories (transactions/<name>/), turns
each new one into a Transaction exactly once, drives it as a saga, and commits every outcome to
the results branch, so that \`git log janus/results\` is the audit trail. See docs/git.md.

A webhook from the Git host (POST /webhook on the operations server, see docs/webhooks.md)
triggers an immediate poll; polling continues regardless. With more than one replica, leader
election keeps exactly one active.

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
        webhook: webhookSecret !== undefined,
        ...(settings.credentials &&
          'file' in settings.credentials && { gitTokenFile: settings.credentials.file }),
        ...(settings.credentials &&
          'env' in settings.credentials && { gitTokenEnvName: settings.credentials.env }),
      },
      'janus run starting',
    );

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
            parse: {
              defaultNamespace: settings.defaultNamespace,
              ...(settings.allowedNamespaces && { allowedNamespaces: settings.allowedNamespaces }),
            },
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

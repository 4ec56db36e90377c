/**
 * The Git side of `janus run` as the manager sees it: the repository, opened once per process,
 * its webhook, and the Git side (src/gitops/git-side.ts) started on it for each leadership term.
 * The manager imports this module only for janus run: janus controller never loads the Git code
 * (nor the zlib it needs; test/local/node-builtins.test.ts).
 */
import { readAgeKeys } from '../changes/age-keys.ts';
import type { TransactionCache } from '../controller/transaction-cache.ts';
import { allowedSignersFile } from '../git/allowed-signers-file.ts';
import { credentialsProvider, formatBytes, GitRepository } from '../git/index.ts';
import { type SigningKeySource, signingKeyFile } from '../git/signing-key-file.ts';
import { publicKeyLine } from '../git/ssh-wire.ts';
import { type GitSide, type GitSideOptions, startGitSide } from '../gitops/git-side.ts';
import { describePolicy } from '../gitops/policy.ts';
import { SignatureGate } from '../gitops/signature-gate.ts';
import type { KubeClient } from '../kube/client.ts';
import { whoAmI } from '../kube/who-am-i.ts';
import type { Logger } from '../log/index.ts';
import type { Metrics } from '../metrics/index.ts';
import { Renderer } from '../render/renderer.ts';
import type { ResultContext } from '../results/result-context.ts';
import type { ResultRecord } from '../results/result-record.ts';
import type { DriftNotice } from '../sources/drift-monitor.ts';
import { discoveredScopes, SourceApi } from '../sources/source-api.ts';
import { SourceSync } from '../sources/source-sync.ts';
import { VERSION } from '../version.ts';
import { createWebhookHandler, type WebhookRequestHandler } from '../webhook/index.ts';
import type { GitOptions, ManagerOptions, SignatureOptions } from './options.ts';

export interface GitSource {
  readonly repository: GitRepository;
  /** POST /webhook: a push to the watched branch calls `poll`; undefined without a webhook secret. */
  webhook(poll: (reason: string) => void): WebhookRequestHandler | undefined;
  /**
   * Starts the Git side for one term: results writer and reporter (following `cache`),
   * materializer and poller.
   */
  startTerm(signal: AbortSignal, cache: TransactionCache, hooks?: TermHooks): Promise<GitSide>;
}

/** What the rest of the term hears from the Git side. */
export interface TermHooks {
  /** Each record the materializer queued for the results branch (a rejection notifies). */
  onResultWritten?(record: ResultRecord): void;
  /** A source's drift found, changed or gone (the `Drifted` notification). */
  onDrift?(notice: DriftNotice): void;
}

/** What the Git side shares with the rest of the process. */
type Shared = Pick<ManagerOptions, 'controllerNamespace' | 'watchNamespace' | 'instance' | 'log'> & {
  client: KubeClient;
  metrics: Metrics;
};

/** Opens the repository, learns who writes the results, and says what it will do (and what is risky). */
export async function openGitSource(o: GitOptions, shared: Shared): Promise<GitSource> {
  const { client, log, metrics } = shared;
  const repository = await GitRepository.open({
    location: o.repo,
    cacheDir: o.cacheDir,
    ...(o.credentials && {
      credentials: credentialsProvider({
        secret: o.credentials,
        ...(o.username !== undefined && { username: o.username }),
      }),
    }),
    maxFetchBytes: o.maxFetchBytes,
    maxTreeBytes: o.maxTreeBytes,
    logger: log,
  });
  // Who writes the results: the Kubernetes user Janus runs as, stable across restarts.
  const identity =
    (await whoAmI(client, (error) =>
      log.warn({ err: error }, 'cannot tell which Kubernetes user Janus runs as; results name "janus"'),
    )) ?? 'janus';
  announce(o, repository.display, log);
  // Read once now: a missing, encrypted or malformed key stops janus run before anything is written.
  const resultsSigningKey = o.resultsSigningKeyFile ? signingKeyFile(o.resultsSigningKeyFile) : undefined;
  if (resultsSigningKey) {
    const { key } = await resultsSigningKey.read();
    const publicKey = publicKeyLine(key.publicKey);
    log.info(
      { resultsSigningKeyFile: resultsSigningKey.path, publicKey },
      'results commits are signed with this key',
    );
  }
  const context: ResultContext = { controllerVersion: VERSION, identity };
  return {
    repository,
    webhook: (poll) =>
      o.webhook &&
      createWebhookHandler({
        secret: o.webhook.secret,
        branch: o.branch,
        onTrigger: (trigger) => poll(`webhook ${trigger.provider}`),
        logger: log,
        onResult: metrics.webhookRequest,
      }),
    startTerm: (signal, cache, hooks) =>
      startGitTerm({ ...shared, git: o, repository, context, resultsSigningKey, cache, hooks }, signal),
  };
}

/** The startup line, and a warning for each setting that is risky or refuses everything. */
function announce(o: GitOptions, repository: string, log: Logger): void {
  log.info(
    {
      repository,
      branch: o.branch,
      root: o.root,
      resultsBranch: o.resultsBranch,
      pollInterval: o.pollInterval,
      initial: o.initial,
      policy: describePolicy(o.policy),
      ...(o.sources && {
        sources: {
          root: o.sources.root,
          kustomize: o.sources.tools.kustomize ?? 'not installed',
          helm: o.sources.tools.helm ?? 'not installed',
          renderConcurrency: o.sources.limits.concurrency,
        },
      }),
      webhook: o.webhook !== undefined,
      commitStatus: o.commitStatus
        ? {
            provider: o.commitStatus.forge.kind,
            api: o.commitStatus.forge.apiBase,
            project: o.commitStatus.forge.project,
          }
        : 'off',
      maxFetchBytes: o.maxFetchBytes === 0 ? 'unlimited' : formatBytes(o.maxFetchBytes),
      ...(o.credentials && 'file' in o.credentials && { gitTokenFile: o.credentials.file }),
      ...(o.credentials && 'env' in o.credentials && { gitTokenEnvName: o.credentials.env }),
      verifySignatures: o.signatures
        ? {
            allowedSignersFile: o.signatures.allowedSignersFile,
            signerNamespaces: Object.fromEntries(o.signatures.scopes.entries),
          }
        : false,
      ...(o.resultsSigningKeyFile && { resultsSigningKeyFile: o.resultsSigningKeyFile }),
    },
    'janus run starting',
  );
  if (o.insecureHttp) {
    log.warn(
      { repository },
      'the Git credentials are sent over plain http:// (--allow-insecure-http): anyone on the network path can read them, and change what Janus fetches',
    );
  }
  if (o.policy.serviceAccounts.length === 0) {
    log.warn(
      'no ServiceAccount is allowed (--allowed-service-accounts, JANUS_ALLOWED_SERVICE_ACCOUNTS): every transaction directory will be refused',
    );
  }
}

/** The gate of --verify-signatures; it logs each change of the allowed-signers file it reads. */
function signatureGate(options: SignatureOptions, log: Logger): SignatureGate {
  const file = options.allowedSignersFile;
  return new SignatureGate({
    source: allowedSignersFile(file),
    scopes: options.scopes,
    onReload: (allowed) => {
      const fields = { allowedSignersFile: file, keys: allowed.signers.length };
      if (allowed.problems.length > 0)
        log.warn({ ...fields, problems: allowed.problems }, 'allowed signers read; some lines are not used');
      else log.info(fields, 'allowed signers read');
      if (allowed.signers.length === 0)
        log.warn(fields, 'no usable allowed signer: every transaction directory will be rejected');
    },
  });
}

type TermOptions = Shared & {
  git: GitOptions;
  repository: GitRepository;
  context: ResultContext;
  resultsSigningKey: SigningKeySource | undefined;
  cache: TransactionCache;
  hooks: TermHooks | undefined;
};

/** The sources step of a term (src/sources/), with a Renderer of its own, stopped with the term. */
function sourcesStep(o: TermOptions): GitSideOptions['sources'] {
  const settings = o.git.sources;
  if (!settings) return undefined;
  return (context) =>
    new SourceSync({
      ...context,
      repository: o.repository,
      branch: o.git.branch,
      root: settings.root,
      policy: o.git.policy,
      api: new SourceApi(
        context.objects,
        { repository: o.repository.display, branch: o.git.branch, instance: o.instance },
        o.watchNamespace,
      ),
      renderer: new Renderer({ tools: settings.tools, limits: settings.limits, logger: context.log }),
      lookupScopes: (kinds) => discoveredScopes(context.objects, kinds),
      ageKeys: (namespace, serviceAccount) =>
        readAgeKeys(context.objects.as(`system:serviceaccount:${namespace}:${serviceAccount}`), namespace),
      context: o.context,
      drift: {
        objects: context.objects,
        ...driftTestSettings(),
        ...(o.hooks?.onDrift && { onNews: o.hooks.onDrift }),
        setMetric: o.metrics.setSourceDrift,
      },
    });
}

/**
 * Test-only (JANUS_TEST_DRIFT_INTERVAL_MS): every source's drift interval, below the CRD's 1m
 * minimum, so a cluster test sees two checks in seconds. Never set in production.
 */
function driftTestSettings(): { intervalOverrideMs?: number; tickMs?: number } {
  const ms = Number(process.env.JANUS_TEST_DRIFT_INTERVAL_MS);
  if (!Number.isInteger(ms) || ms <= 0) return {};
  return { intervalOverrideMs: ms, tickMs: Math.min(30_000, Math.max(200, Math.floor(ms / 2))) };
}

async function startGitTerm(o: TermOptions, signal: AbortSignal): Promise<GitSide> {
  const { git } = o;
  const side = await startGitSide(
    {
      client: o.client,
      cache: o.cache,
      repository: o.repository,
      branch: git.branch,
      root: git.root,
      resultsBranch: git.resultsBranch,
      parse: { policy: git.policy },
      budget: git.budget,
      signatures: git.signatures && signatureGate(git.signatures, o.log),
      resultsSigningKey: o.resultsSigningKey,
      initial: git.initial,
      pollIntervalMs: git.pollIntervalMs,
      controllerNamespace: o.controllerNamespace,
      instance: o.instance,
      context: o.context,
      metrics: o.metrics,
      log: o.log,
      commitStatus: git.commitStatus,
      onResultWritten: o.hooks?.onResultWritten,
      sources: sourcesStep(o),
    },
    signal,
  );
  o.log.info({ repository: o.repository.display, branch: git.branch }, 'watching the repository');
  return side;
}

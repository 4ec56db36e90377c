/**
 * The settings of `janus run`: its flags (each with an environment variable) and the Git side of
 * them, checked before anything starts; every problem is a UsageError naming its flag.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_MAX_FETCH_BYTES, describeSecretSource, redactUrl, type SecretSource } from '../git/index.ts';
import { GIT_INPUT_LIMITS } from '../git/input-limits.ts';
import { DEFAULT_POLL_BUDGET, type PollBudget } from '../gitops/poll-budget.ts';
import { signerScopes } from '../gitops/signer-scopes.ts';
import { controllerNamespace } from '../manager/controller-namespace.ts';
import type { GitOptions, SignatureOptions } from '../manager/options.ts';
import { parseByteSize } from './byte-size.ts';
import {
  durationFlag,
  type Flags,
  policyFromFlags,
  positiveInt,
  TRANSACTION_DIRECTORY_FLAGS,
  UsageError,
  type Values,
} from './command.ts';
import { COMMIT_STATUS_FLAGS, commitStatusSettings } from './commit-status-settings.ts';
import { CONTROLLER_FLAGS } from './controller-settings.ts';
import { parseBindAddress } from './ops-flags.ts';
import { RENDER_FLAGS } from './render-settings.ts';

/** How to reach an https:// repository: for janus run, and for janus history reading its results branch. */
export const GIT_ACCESS_FLAGS = {
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
} as const satisfies Flags;

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
  ...GIT_ACCESS_FLAGS,
  'max-fetch-bytes': {
    type: 'string',
    env: 'JANUS_MAX_FETCH_BYTES',
    default: `${DEFAULT_MAX_FETCH_BYTES / 1024 / 1024}Mi`,
    placeholder: 'size',
    description:
      'most one fetch from the repository may download (e.g. 64Mi, 1Gi); a larger fetch is stopped and retried at the next poll. 0: no limit',
  },
  'max-tree-bytes': {
    type: 'string',
    env: 'JANUS_MAX_TREE_BYTES',
    default: `${GIT_INPUT_LIMITS.maxTreeBytes / 1024 / 1024}Mi`,
    placeholder: 'size',
    description:
      'largest Git tree (folder listing) the poller parses, read from its header first; a larger one fails the poll, which stays at that commit',
  },
  'max-poll-directories': {
    type: 'string',
    env: 'JANUS_MAX_POLL_DIRECTORIES',
    default: String(DEFAULT_POLL_BUDGET.maxDirectories),
    placeholder: 'count',
    description:
      'changed transaction directories one poll reads; later commits wait for the next poll, and a single commit changing more fails the poll',
  },
  'max-poll-bytes': {
    type: 'string',
    env: 'JANUS_MAX_POLL_BYTES',
    default: `${DEFAULT_POLL_BUDGET.maxBytes / 1024 / 1024}Mi`,
    placeholder: 'size',
    description:
      'bytes of directory files one poll reads; later commits wait for the next poll, and a single commit holding more fails the poll',
  },
  'verify-signatures': {
    type: 'boolean',
    env: 'JANUS_VERIFY_SIGNATURES',
    description:
      'apply a directory only if every commit that made it is signed (SSH) by a key of --allowed-signers-file; else it is Rejected naming the commit',
  },
  'allowed-signers-file': {
    type: 'string',
    env: 'JANUS_ALLOWED_SIGNERS_FILE',
    placeholder: 'path',
    description:
      "git's allowed-signers file (ssh-keygen ALLOWED SIGNERS), re-read at every poll; needs --verify-signatures",
  },
  'signer-namespaces': {
    type: 'string',
    env: 'JANUS_SIGNER_NAMESPACES',
    placeholder: 'principal=ns,…',
    description:
      'restrict signers to namespaces: principal (as in the allowed-signers file)=namespace, repeatable per principal; unlisted principals may sign for any allowed namespace',
  },
  'results-signing-key-file': {
    type: 'string',
    env: 'JANUS_RESULTS_SIGNING_KEY_FILE',
    placeholder: 'path',
    description:
      'sign every results-branch commit with this SSH private key (OpenSSH format, unencrypted; ed25519, ECDSA P-256 or RSA), re-read before each push; unset: unsigned',
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
  ...COMMIT_STATUS_FLAGS,
  'cache-dir': {
    type: 'string',
    env: 'JANUS_CACHE_DIR',
    placeholder: 'path',
    description:
      'Git cache and results not yet pushed (default ~/.cache/janus; /var/cache/janus in the image)',
  },
  ...RENDER_FLAGS,
} as const;

export type RunValues = Values<typeof RUN_FLAGS>;

/**
 * The Git side of the settings, checked: the manager's Git options but for the webhook, whose
 * secret janus run reads once the flags are all checked.
 */
export interface GitSettings extends Omit<GitOptions, 'webhook' | 'pollInterval' | 'sources'> {
  /** --sources-root, trimmed of slashes. */
  sourcesRoot: string;
  webhookSecret: SecretSource | undefined;
  /** Where /webhook is served on its own; undefined: on the operations listener. */
  webhookBindAddress: string | undefined;
}

/** A secret from the file a flag names, else from the environment variable `envName` when it is set. */
function secretSource(
  file: string | undefined,
  envName: string,
  env: NodeJS.ProcessEnv,
): SecretSource | undefined {
  if (file) return { file };
  return env[envName] ? { env: envName } : undefined;
}

export interface GitAccessSettings {
  credentials: SecretSource | undefined;
  /** Credentials go to an http:// repository (allowed by --allow-insecure-http): warn about it. */
  insecureHttp: boolean;
}

/** Checks GIT_ACCESS_FLAGS for the repository `values.repo`. */
export function gitAccessSettings(
  values: {
    repo: string;
    'git-token-file': string | undefined;
    'git-username': string | undefined;
    'allow-insecure-http': boolean;
  },
  env: NodeJS.ProcessEnv = process.env,
): GitAccessSettings {
  const credentials = secretSource(values['git-token-file'], 'JANUS_GIT_TOKEN', env);
  if (values['git-username'] && !credentials) {
    throw new UsageError('--git-username needs a token: --git-token-file or JANUS_GIT_TOKEN');
  }
  const insecureHttp = credentials !== undefined && /^http:\/\//i.test(values.repo);
  if (insecureHttp && !values['allow-insecure-http']) {
    throw new UsageError(
      `--repo ${redactUrl(values.repo)} is plain http:// and Git credentials are configured (${describeSecretSource(credentials)}): they would cross the network in clear text. Use https://, or pass --allow-insecure-http (JANUS_ALLOW_INSECURE_HTTP=true) on a network you trust`,
    );
  }
  return { credentials, insecureHttp };
}

/** Checks the Git flags; every problem is a UsageError naming its flag. */
export function gitSettings(values: RunValues, env: NodeJS.ProcessEnv = process.env): GitSettings {
  if (!values.repo)
    throw new UsageError('--repo (or JANUS_REPO) is required: an https:// URL or a local path');
  const policy = policyFromFlags(values, controllerNamespace(values['controller-namespace']));
  const pollIntervalMs = durationFlag(values['poll-interval'], 'poll-interval');
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
  const root = values.root.replace(/^\/+|\/+$/g, '');
  const sourcesRoot = sourcesRootOf(values['sources-root'], root);
  const { credentials, insecureHttp } = gitAccessSettings({ ...values, repo: values.repo }, env);
  const maxFetchBytes = parseByteSize(values['max-fetch-bytes'], 'max-fetch-bytes');
  const maxTreeBytes = positive(parseByteSize(values['max-tree-bytes'], 'max-tree-bytes'), 'max-tree-bytes');
  const budget: PollBudget = {
    maxDirectories: positiveInt(values['max-poll-directories'], 'max-poll-directories'),
    maxBytes: positive(parseByteSize(values['max-poll-bytes'], 'max-poll-bytes'), 'max-poll-bytes'),
  };
  const webhookSecret = secretSource(values['webhook-secret-file'], 'JANUS_WEBHOOK_SECRET', env);
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
    signatures: signatureSettings(values),
    resultsSigningKeyFile: values['results-signing-key-file'] || undefined,
    branch: values.branch,
    root,
    sourcesRoot,
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
    maxTreeBytes,
    budget,
    insecureHttp,
    commitStatus: commitStatusSettings({ ...values, repo: values.repo }, env),
  };
}

/** --verify-signatures and its file; a file or scopes without the flag are refused, not ignored. */
function signatureSettings(values: RunValues): SignatureOptions | undefined {
  const file = values['allowed-signers-file'];
  const scopes = values['signer-namespaces'];
  if (!values['verify-signatures']) {
    if (file || scopes)
      throw new UsageError(
        '--allowed-signers-file and --signer-namespaces take effect only with --verify-signatures (JANUS_VERIFY_SIGNATURES=true)',
      );
    return undefined;
  }
  if (!file)
    throw new UsageError('--verify-signatures needs --allowed-signers-file (JANUS_ALLOWED_SIGNERS_FILE)');
  try {
    return { allowedSignersFile: file, scopes: signerScopes((scopes ?? '').split(',')) };
  } catch (error) {
    throw new UsageError(`--signer-namespaces: ${(error as Error).message}`);
  }
}

/** --sources-root, trimmed of slashes: a folder of its own, never the transactions folder. */
export function sourcesRootOf(value: string, transactionsRoot: string): string {
  const root = value.replace(/^\/+|\/+$/g, '');
  if (root === '') throw new UsageError('--sources-root: must name a folder of the repository, not its root');
  if (root === transactionsRoot)
    throw new UsageError(
      `--sources-root: must differ from --root (${transactionsRoot}): sources and transaction directories live apart`,
    );
  return root;
}

/** A size that must be at least one byte: a limit of 0 would refuse everything. */
function positive(bytes: number, flag: string): number {
  if (bytes < 1) throw new UsageError(`--${flag}: must be more than 0`);
  return bytes;
}

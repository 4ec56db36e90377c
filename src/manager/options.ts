/**
 * What the manager runs, decided before anything starts: `janus controller` and `janus run` map
 * their flags to these options, and every value here has already been checked.
 */
import type { AnalysisPolicy } from '../analysis/index.ts';
import type { CommitStatusSettings } from '../commit-status/term.ts';
import type { SecretSource } from '../git/index.ts';
import type { RepositoryPolicy } from '../gitops/policy.ts';
import type { PollBudget } from '../gitops/poll-budget.ts';
import type { SignerScopes } from '../gitops/signer-scopes.ts';
import type { Logger } from '../log/index.ts';
import type { RenderLimits } from '../render/limits.ts';
import type { RenderTools } from '../render/tools.ts';
import type { RetentionPolicy } from '../retention/select.ts';
import type { LeaderTimings } from '../runtime/leader-election.ts';

/** Where a listener binds; `host` 0.0.0.0 for all interfaces. */
export interface BindAddress {
  host: string;
  port: number;
}

export interface RetentionSettings {
  policy: RetentionPolicy;
  intervalMs: number;
}

export interface LeaderElectionOptions {
  /** Elect one active replica; false: this replica leads from the start, alone. */
  enabled: boolean;
  /** The Lease in the controller namespace (also the `lease` label of janus_leader, elected or not). */
  leaseName: string;
  timings: LeaderTimings;
}

export interface ManagerOptions {
  /** How to reach the API server; the user agent names the process (`janus/<version>`). */
  kube: { kubeconfig: string | undefined; context: string | undefined; userAgent: string };
  log: Logger;
  /** Where /metrics, /healthz and /readyz are served (and /webhook without a listener of its own); undefined: off. */
  opsAddress: BindAddress | undefined;
  /** Where the leader-election Lease, the Git cursor and locks on cluster-scoped targets live. */
  controllerNamespace: string;
  /** Only Transactions in this namespace; all when undefined. */
  watchNamespace: string | undefined;
  /** What metric analysis may query (addresses) and read (template namespaces). */
  analysis: AnalysisPolicy;
  /** Kinds besides Secret SOPS content may be applied to (--sops-kinds); checked. */
  sopsKinds: readonly string[];
  /** The notification settings file (src/notify/config.ts); undefined: no notifications. */
  notificationsConfig?: string | undefined;
  /** This installation's instance (src/controller/installation.ts); undefined: the default one. */
  instance: string | undefined;
  /** Transactions reconciled in parallel. */
  concurrency: number;
  /** Prune finished Transactions by this policy; never when undefined. */
  retention: RetentionSettings | undefined;
  leaderElection: LeaderElectionOptions;
  /** The Git side (`janus run`); undefined: the saga controller alone (`janus controller`). */
  git?: GitOptions | undefined;
}

export interface GitOptions {
  /** An https:// URL or a local path. */
  repo: string;
  branch: string;
  root: string;
  resultsBranch: string;
  /** What the repository may use: namespaces, ServiceAccounts; its default namespace. */
  policy: RepositoryPolicy;
  pollIntervalMs: number;
  /** The poll interval as the operator wrote it, as the startup line shows it. */
  pollInterval: string;
  initial: 'baseline' | 'apply';
  cacheDir: string;
  credentials: SecretSource | undefined;
  username: string | undefined;
  /** What one fetch may download; 0: no limit. */
  maxFetchBytes: number;
  /** The largest tree the poller parses. */
  maxTreeBytes: number;
  /** What one poll reads. */
  budget: PollBudget;
  /** Credentials go to an http:// repository (allowed by --allow-insecure-http): warn about it. */
  insecureHttp: boolean;
  /** POST /webhook triggers a poll; undefined: no webhook. */
  webhook: WebhookOptions | undefined;
  /** Statuses on the source commits (src/commit-status/); undefined: off. */
  commitStatus?: CommitStatusSettings | undefined;
  /** --verify-signatures; undefined: commits are not checked. */
  signatures?: SignatureOptions | undefined;
  /** --results-signing-key-file: results commits are signed with it; undefined: unsigned. */
  resultsSigningKeyFile?: string | undefined;
  /** Sources (docs/sources.md): their folder and the render tools and bounds; undefined: none. */
  sources?: SourceSettings | undefined;
}

/** Sources (docs/sources.md): where they are declared, and how they are rendered. */
export interface SourceSettings {
  /** --sources-root: the folder of the declarations. */
  root: string;
  tools: RenderTools;
  limits: RenderLimits;
}

export interface SignatureOptions {
  /** git's allowed-signers file, re-read at every poll. */
  allowedSignersFile: string;
  /** `principal=namespace` entries (src/gitops/signer-scopes.ts), checked. */
  scopes: SignerScopes;
}

export interface WebhookOptions {
  secret: string;
  /** A listener of its own, serving /webhook alone; undefined: on the operations listener. */
  address: BindAddress | undefined;
}

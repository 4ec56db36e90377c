/**
 * The flags of the long-running commands (`janus controller`, and `janus run` on top of them),
 * checked and mapped to the manager's options before anything starts: a bad one is a usage error
 * (exit 2) naming its flag.
 */
import {
  type AllowedAddress,
  AllowedAddressError,
  type AnalysisPolicy,
  type AnalysisTimeouts,
  DEFAULT_REQUEST_TIMEOUT_MS,
  parseAllowedAddresses,
} from '../analysis/index.ts';
import { DNS_LABEL } from '../api/v1alpha1/patterns.ts';
import { parseSopsKinds, SopsKindsError } from '../changes/sops-kinds.ts';
import { leaderElectionId } from '../controller/installation.ts';
import { createLogger, isLogLevel, type Logger } from '../log/index.ts';
import { controllerNamespace } from '../manager/controller-namespace.ts';
import type { ManagerOptions, RetentionSettings } from '../manager/options.ts';
import { DEFAULT_RETENTION } from '../retention/select.ts';
import { type LeaderTimings, leaderTimingsProblem } from '../runtime/leader-election.ts';
import { isNamespaceGlob } from '../text/glob.ts';
import { VERSION } from '../version.ts';
import {
  durationFlag,
  KUBE_FLAGS,
  LOG_FLAGS,
  positiveInt,
  SOPS_KINDS_FLAG,
  UsageError,
  type Values,
} from './command.ts';
import { INSTANCE_FLAG, instanceFlag } from './instance-flag.ts';
import { OPS_FLAGS, parseBindAddress } from './ops-flags.ts';

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
  'analysis-allowed-addresses': {
    type: 'string',
    env: 'JANUS_ANALYSIS_ALLOWED_ADDRESSES',
    placeholder: 'url,url',
    description:
      'addresses metric analysis checks may make the controller query, comma-separated prefixes scheme://host[:port][/path] (matched on the parsed URL; a path on a segment boundary), each for every namespace or, written <namespace glob>=<prefix>, for those namespaces only; unset or empty: none, so every check is refused. No wildcard in an address',
  },
  ...SOPS_KINDS_FLAG,
  'analysis-template-namespaces': {
    type: 'string',
    env: 'JANUS_ANALYSIS_TEMPLATE_NAMESPACES',
    placeholder: 'ns1,ns2',
    description:
      "namespaces whose AnalysisTemplates every Transaction may use, comma-separated, besides its own namespace and the controller's (always allowed); unset or empty: those two only",
  },
  'notifications-config': {
    type: 'string',
    env: 'JANUS_NOTIFICATIONS_CONFIG',
    placeholder: 'file',
    description:
      "the platform team's notification settings (providers and routes, docs/operations.md), re-read when the file changes; unset: no notifications",
  },
  concurrency: {
    type: 'string',
    env: 'JANUS_CONCURRENCY',
    default: '16',
    placeholder: 'n',
    description: 'Transactions reconciled in parallel',
  },
  'analysis-timeout': {
    type: 'string',
    env: 'JANUS_ANALYSIS_TIMEOUT',
    default: '10s',
    placeholder: 'duration',
    description:
      "how long one metric analysis measurement waits for Prometheus (which stops evaluating then) or a check's URL, 1s to 10m, and <namespace glob>=<duration> entries for some namespaces (e.g. 10s,team-a=3s: the first matching entry is a namespace's); it runs off the reconcile workers",
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

/**
 * What metric analysis may query and read, from the flags: a refused entry is a usage error
 * naming its flag. The controller's namespace is always one a template may come from.
 */
export function analysisPolicy(
  values: {
    'analysis-allowed-addresses': string | undefined;
    'analysis-template-namespaces': string | undefined;
    'analysis-timeout': string;
  },
  controllerNamespace: string,
): AnalysisPolicy {
  let allowedAddresses: AllowedAddress[];
  try {
    allowedAddresses = parseAllowedAddresses(values['analysis-allowed-addresses']);
  } catch (e) {
    if (e instanceof AllowedAddressError) throw new UsageError(`--analysis-allowed-addresses: ${e.message}`);
    throw e;
  }
  const listed = (values['analysis-template-namespaces'] ?? '')
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '');
  const label = new RegExp(DNS_LABEL);
  const bad = listed.find((n) => !label.test(n) || n.length > 63);
  if (bad !== undefined) {
    throw new UsageError(`--analysis-template-namespaces: "${bad}" is not a namespace name`);
  }
  return {
    allowedAddresses,
    templateNamespaces: [...new Set([controllerNamespace, ...listed])],
    timeouts: analysisTimeouts(values['analysis-timeout']),
  };
}

/** --sops-kinds, checked: an entry that cannot be allowed is a usage error naming the flag. */
export function sopsKinds(value: string | undefined): string[] {
  try {
    return parseSopsKinds(value);
  } catch (e) {
    if (e instanceof SopsKindsError) throw new UsageError(`--sops-kinds: ${e.message}`);
    throw e;
  }
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

/**
 * --analysis-timeout: `<duration>` for every namespace, and `<namespace glob>=<duration>` entries
 * for some, comma-separated (`10s,team-a=3s`; the first entry matching a namespace is its). A
 * measurement holds its slot at most this long, and Prometheus evaluates its query no longer.
 */
export function analysisTimeouts(value: string): AnalysisTimeouts {
  let defaultMs = DEFAULT_REQUEST_TIMEOUT_MS;
  const namespaces: { glob: string; ms: number }[] = [];
  for (const entry of value.split(',').map((e) => e.trim())) {
    if (entry === '') continue;
    const eq = entry.indexOf('=');
    const glob = eq < 0 ? undefined : entry.slice(0, eq).trim();
    const duration = entry.slice(eq + 1).trim();
    if (glob !== undefined && !isNamespaceGlob(glob)) {
      throw new UsageError(
        `--analysis-timeout: "${entry}": "${glob}" is not a namespace or a glob of namespaces (letters, digits, "-", "*" and "?")`,
      );
    }
    const ms = durationFlag(duration, 'analysis-timeout');
    if (ms < 1000 || ms > 600_000) {
      throw new UsageError(`--analysis-timeout: must be from 1s to 10m, got "${entry}"`);
    }
    if (glob === undefined) defaultMs = ms;
    else namespaces.push({ glob, ms });
  }
  return { defaultMs, namespaces };
}

export function loggerFor(level: string, name: string): Logger {
  if (!isLogLevel(level)) throw new UsageError(`--log-level: unknown level "${level}"`);
  return createLogger({ level, name, version: VERSION });
}

/**
 * The manager's options from the flags, every one checked first. `name` names the process: the
 * logger's name and the API client's user agent.
 */
export function managerOptions(values: Values<typeof CONTROLLER_FLAGS>, name: string): ManagerOptions {
  const log = loggerFor(values['log-level'], name);
  const timings = leaderTimings(values);
  const concurrency = positiveInt(values.concurrency, 'concurrency');
  const retention = retentionPolicy(values);
  const instance = instanceFlag(values.instance);
  const opsAddress = parseBindAddress(values['metrics-bind-address']);
  const namespace = controllerNamespace(values['controller-namespace']);
  return {
    kube: { kubeconfig: values.kubeconfig, context: values.context, userAgent: `${name}/${VERSION}` },
    log,
    opsAddress,
    controllerNamespace: namespace,
    analysis: analysisPolicy(values, namespace),
    sopsKinds: sopsKinds(values['sops-kinds']),
    notificationsConfig: values['notifications-config'] || undefined,
    watchNamespace: values.namespace,
    instance,
    concurrency,
    retention,
    leaderElection: {
      enabled: values['leader-elect'] && !values['no-leader-elect'],
      leaseName: leaderElectionId(values['leader-election-id'], instance),
      timings,
    },
  };
}

/**
 * The shape of a `janus` command: its flags (each with an environment variable), its help, and
 * its run function. Parsing is node:util's parseArgs; help is generated from the definitions.
 */

import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { parseDuration } from '../api/duration.ts';
import {
  DEFAULT_CONTROLLER_NAMESPACE,
  PolicyError,
  type RepositoryPolicy,
  repositoryPolicy,
} from '../gitops/policy.ts';
import { EXPECTED_ERROR } from '../log/describe-error.ts';
import { util } from '../node-builtins.ts';

export interface Flag {
  type: 'string' | 'boolean';
  short?: string;
  /** Environment variable read when the flag is not given. */
  env?: string;
  default?: string | boolean;
  /** Shown in help as `--flag <placeholder>`. */
  placeholder?: string;
  description: string;
}

export type Flags = Record<string, Flag>;

export type Values<F extends Flags> = {
  [K in keyof F]: F[K]['type'] extends 'boolean'
    ? boolean
    : F[K] extends { default: string }
      ? string
      : string | undefined;
};

export interface Command<F extends Flags = Flags> {
  name: string;
  /** e.g. "janus status [name] [flags]" */
  usage: string;
  /** Paragraphs after the usage line: what it does, exit codes, examples. */
  description: string;
  flags: F;
  run(values: Values<F>, args: string[]): Promise<number>;
}

/** A user error: printed without a stack trace, exit status 2 unless given. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
  readonly [EXPECTED_ERROR] = true;
  readonly exitCode: number;
  constructor(message: string, exitCode = 2) {
    super(message);
    this.exitCode = exitCode;
  }
}

export function defineCommand<F extends Flags>(command: Command<F>): Command<F> {
  return command;
}

export const HELP_FLAG: Flag = { type: 'boolean', short: 'h', description: 'show this help' };

export function parse<F extends Flags>(
  command: Command<F>,
  argv: string[],
  env: NodeJS.ProcessEnv,
): { values: Values<F>; args: string[]; help: boolean } {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    help: { type: 'boolean', short: 'h' },
  };
  for (const [name, flag] of Object.entries(command.flags)) {
    options[name] = { type: flag.type, ...(flag.short && { short: flag.short }) };
  }
  let parsed: ReturnType<typeof util.parseArgs>;
  try {
    parsed = util.parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(`${(e as Error).message}\nRun 'janus ${command.name} --help' for usage.`);
  }
  const values: Record<string, string | boolean | undefined> = {};
  // A command with --settings reads the janus-settings ConfigMap as defaults under the environment.
  const settingsFile =
    'settings' in command.flags ? ((parsed.values.settings as string) ?? env.JANUS_SETTINGS) : undefined;
  if (settingsFile) env = { ...settingsFromFile(settingsFile), ...env };
  for (const [name, flag] of Object.entries(command.flags)) {
    const given = parsed.values[name];
    const fromEnv = flag.env ? env[flag.env] : undefined;
    if (given !== undefined) values[name] = given as string | boolean;
    else if (fromEnv !== undefined && fromEnv !== '')
      values[name] = flag.type === 'boolean' ? parseBool(fromEnv, flag.env ?? '') : fromEnv;
    else values[name] = flag.default ?? (flag.type === 'boolean' ? false : undefined);
  }
  return { values: values as Values<F>, args: parsed.positionals, help: parsed.values.help === true };
}

/**
 * The JANUS_* entries of a settings file: the janus-settings ConfigMap as manifests/settings.yaml
 * ships it (or as `kubectl kustomize` renders it, among other documents), so pull-request CI runs
 * validate and plan with exactly the deployed janus run's policy.
 */
export function settingsFromFile(file: string): Record<string, string> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(
      `--settings ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`,
    );
  }
  const out: Record<string, string> = {};
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new UsageError(`--settings ${file}: ${doc.errors[0]?.message}`);
    const obj = doc.toJSON() as { kind?: string; data?: Record<string, unknown> } | null;
    if (obj?.kind !== 'ConfigMap' || !obj.data) continue;
    for (const [key, value] of Object.entries(obj.data)) {
      if (key.startsWith('JANUS_') && typeof value === 'string') out[key] = value;
    }
  }
  if (Object.keys(out).length === 0) {
    throw new UsageError(
      `--settings ${file}: no ConfigMap with JANUS_* entries (expected janus-settings, as manifests/settings.yaml)`,
    );
  }
  return out;
}

function parseBool(value: string, name: string): boolean {
  if (/^(1|true|yes|on)$/i.test(value)) return true;
  if (/^(0|false|no|off)$/i.test(value)) return false;
  throw new UsageError(`${name}=${value}: expected true or false`);
}

export function renderHelp(command: Command): string {
  const rows = [...Object.entries(command.flags), ['help', HELP_FLAG] as const].map(([name, flag]) => {
    const left = `${flag.short ? `-${flag.short}, ` : '    '}--${name}${flag.type === 'string' ? ` <${flag.placeholder ?? 'value'}>` : ''}`;
    const extras = [
      flag.default !== undefined && flag.default !== false ? `default ${JSON.stringify(flag.default)}` : '',
      flag.env ? `env ${flag.env}` : '',
    ].filter(Boolean);
    return [left, `${flag.description}${extras.length ? ` (${extras.join('; ')})` : ''}`];
  });
  const width = Math.max(...rows.map(([l]) => l?.length ?? 0)) + 2;
  const flags = rows.map(([l, r]) => `  ${(l ?? '').padEnd(width)}${r}`).join('\n');
  return `Usage: ${command.usage}\n\n${command.description.trim()}\n\nFlags:\n${flags}\n`;
}

/**
 * Where transaction directories are read and what the repository may use (its policy, see
 * src/gitops/policy.ts): the same for run, validate and plan, so CI reaches the cluster's verdict.
 */
/** validate and plan: the policy and layout from the deployed janus run's settings file. */
export const SETTINGS_FLAG = {
  settings: {
    type: 'string',
    env: 'JANUS_SETTINGS',
    placeholder: 'file',
    description:
      'the janus-settings ConfigMap (manifests/settings.yaml, or your overlay rendered by kubectl kustomize): its JANUS_* entries are the defaults of these flags, under flags and the environment',
  },
} as const satisfies Flags;

/**
 * --sops-kinds: the kinds besides Secret SOPS content may be applied to. Given to the controller
 * (which refuses the rest before decrypting) and to janus validate and plan (which refuse such a
 * change file offline), so CI reaches the cluster's verdict.
 */
export const SOPS_KINDS_FLAG = {
  'sops-kinds': {
    type: 'string',
    env: 'JANUS_SOPS_KINDS',
    placeholder: 'Kind.group,Kind',
    description:
      "kinds besides Secret that SOPS-encrypted change files may create or replace, comma-separated, Kind (core) or Kind.group; unset or empty: Secrets only. Never a kind the built-in view role reads; the controller also refuses one the cluster's aggregated view ClusterRole reads",
  },
} as const satisfies Flags;

export const TRANSACTION_DIRECTORY_FLAGS = {
  root: {
    type: 'string',
    env: 'JANUS_ROOT',
    default: 'transactions',
    placeholder: 'folder',
    description: 'folder holding the transaction directories, relative to the repository root',
  },
  'default-namespace': {
    type: 'string',
    env: 'JANUS_DEFAULT_NAMESPACE',
    default: 'default',
    placeholder: 'namespace',
    description:
      "namespace of a Transaction whose transaction.yaml names none; never the controller's namespace or kube-*",
  },
  'allowed-namespaces': {
    type: 'string',
    env: 'JANUS_ALLOWED_NAMESPACES',
    placeholder: 'ns1,ns2',
    description:
      "namespaces the repository may use, for its Transactions and their namespaced targets, comma-separated; unset or empty: only --default-namespace. No wildcard; the controller's namespace and kube-* are refused",
  },
  'allowed-service-accounts': {
    type: 'string',
    env: 'JANUS_ALLOWED_SERVICE_ACCOUNTS',
    placeholder: 'sa,ns/sa',
    description:
      'ServiceAccounts the repository may run transactions as, comma-separated: name (that name in every allowed namespace) or namespace/name; unset or empty: none, so every directory is refused. No wildcard',
  },
  ...SOPS_KINDS_FLAG,
  'allowed-cluster-kinds': {
    type: 'string',
    env: 'JANUS_ALLOWED_CLUSTER_KINDS',
    placeholder: 'Kind,group/Kind',
    description:
      "cluster-scoped kinds a source may render, comma-separated: Kind (core group) or group/Kind, e.g. Namespace,apiextensions.k8s.io/CustomResourceDefinition; unset: the ServiceAccount's RBAC alone decides",
  },
  'sources-root': {
    type: 'string',
    env: 'JANUS_SOURCES_ROOT',
    default: 'sources',
    placeholder: 'folder',
    description:
      'folder holding the source declarations (<name>.yaml, one Source each), relative to the repository root',
  },
} as const satisfies Flags;

/**
 * The controller's namespace for commands that do not run the controller (validate, plan): no
 * repository may use it, so CI must know it to reach the cluster's verdict.
 */
export const POLICY_CONTROLLER_NAMESPACE_FLAG = {
  'controller-namespace': {
    type: 'string',
    env: 'JANUS_CONTROLLER_NAMESPACE',
    default: DEFAULT_CONTROLLER_NAMESPACE,
    placeholder: 'namespace',
    description: 'the namespace janus run runs in (its --controller-namespace): no repository may use it',
  },
} as const satisfies Flags;

/** The repository's policy from TRANSACTION_DIRECTORY_FLAGS; a refused setting is a UsageError naming its flag. */
export function policyFromFlags(
  values: {
    'default-namespace': string;
    'allowed-namespaces': string | undefined;
    'allowed-service-accounts': string | undefined;
    'sops-kinds': string | undefined;
    'allowed-cluster-kinds': string | undefined;
  },
  controllerNamespace: string,
): RepositoryPolicy {
  try {
    return repositoryPolicy({
      defaultNamespace: values['default-namespace'],
      allowedNamespaces: values['allowed-namespaces'],
      allowedServiceAccounts: values['allowed-service-accounts'],
      sopsKinds: values['sops-kinds'],
      clusterKinds: values['allowed-cluster-kinds'],
      controllerNamespace,
    });
  } catch (e) {
    if (e instanceof PolicyError) throw new UsageError(e.message);
    throw e;
  }
}

/** Flags shared by every command that talks to a cluster. */
export const KUBE_FLAGS = {
  kubeconfig: {
    type: 'string',
    env: 'KUBECONFIG',
    placeholder: 'path',
    description: 'kubeconfig file; default ~/.kube/config, or the in-cluster configuration',
  },
  context: {
    type: 'string',
    env: 'JANUS_CONTEXT',
    placeholder: 'name',
    description: 'kubeconfig context to use',
  },
} as const satisfies Flags;

export const LOG_FLAGS = {
  'log-level': {
    type: 'string',
    env: 'JANUS_LOG_LEVEL',
    default: 'info',
    placeholder: 'level',
    description: 'fatal, error, warn, info, debug or trace',
  },
} as const satisfies Flags;

/** A duration flag in milliseconds; a value that is not one is a UsageError naming the flag. */
export function durationFlag(value: string, flag: string): number {
  try {
    return parseDuration(value);
  } catch (e) {
    throw new UsageError(`--${flag}: ${(e as Error).message}`);
  }
}

export function positiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new UsageError(`--${flag}: expected a positive whole number, got "${value}"`);
  return n;
}

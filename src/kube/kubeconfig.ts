/**
 * Finding and reading a kubeconfig the way kubectl does: --kubeconfig, else $KUBECONFIG's files
 * merged, else ~/.kube/config, else the pod's ServiceAccount. Entries are read by client-node's
 * own readers, so every field means what it means to client-node.
 *
 * Only client-node's entry readers are loaded here, not its main module: that one loads every
 * generated API model (about 57 MB resident), which a controller holding a ServiceAccount or
 * static token never uses. Credentials that need code to obtain (exec plugins, auth providers)
 * get the full KubeConfig in credentials.ts, loaded only then.
 */
import { existsSync, readFileSync } from 'node:fs';
import { isIPv6 } from 'node:net';
import { homedir } from 'node:os';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import {
  type Cluster,
  type Context,
  newClusters,
  newContexts,
  newUsers,
  type User,
} from '@kubernetes/client-node/dist/config_types.js';
import { parse } from 'yaml';
import { EXPECTED_ERROR } from '../log/describe-error.ts';

export type { Cluster, Context, User };

export interface LoadOptions {
  /** Path of a kubeconfig file; default: $KUBECONFIG, ~/.kube/config, or the in-cluster config. */
  kubeconfig?: string | undefined;
  /** Context to use instead of the file's current context. */
  context?: string | undefined;
}

/** A user entry, plus kubectl's `tokenFile`: a token re-read whenever credentials are refreshed. */
export interface KubeUser extends User {
  readonly tokenFile?: string | undefined;
}

/**
 * A kubeconfig that is missing, unreadable, invalid, or lacks the context or cluster asked for;
 * the message names the file. An expected failure: reported without a stack.
 */
export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
  readonly [EXPECTED_ERROR] = true;
}

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export class KubeConfig {
  readonly clusters: readonly Cluster[];
  readonly users: readonly KubeUser[];
  readonly contexts: readonly Context[];
  readonly currentContext: string;
  /** Where it came from, for error messages. */
  readonly source: string;

  constructor(
    clusters: readonly Cluster[],
    users: readonly KubeUser[],
    contexts: readonly Context[],
    currentContext: string,
    source: string,
  ) {
    this.clusters = clusters;
    this.users = users;
    this.contexts = contexts;
    this.currentContext = currentContext;
    this.source = source;
  }

  get context(): Context | undefined {
    return this.contexts.find((c) => c.name === this.currentContext);
  }

  get cluster(): Cluster | undefined {
    const name = this.context?.cluster;
    return this.clusters.find((c) => c.name === name);
  }

  get user(): KubeUser | undefined {
    const name = this.context?.user;
    return this.users.find((u) => u.name === name);
  }

  /** The context's namespace, if it sets one. */
  get namespace(): string | undefined {
    return this.context?.namespace || undefined;
  }

  withContext(name: string): KubeConfig {
    if (!this.contexts.some((c) => c.name === name))
      throw new KubeConfigError(`kubeconfig ${this.source} has no context "${name}"`);
    return new KubeConfig(this.clusters, this.users, this.contexts, name, this.source);
  }
}

/** Loads a kubeconfig the way kubectl does; throws when it names no cluster. */
export function loadKubeConfig(opts: LoadOptions = {}): KubeConfig {
  let config = opts.kubeconfig ? readKubeConfigFile(opts.kubeconfig) : defaultKubeConfig();
  if (!config) {
    throw new KubeConfigError(
      'no Kubernetes configuration found: set KUBECONFIG or --kubeconfig, or run inside a cluster',
    );
  }
  if (opts.context) config = config.withContext(opts.context);
  if (!config.cluster) {
    throw new KubeConfigError(
      `kubeconfig ${config.source} has no cluster for context "${config.currentContext}"`,
    );
  }
  return config;
}

function defaultKubeConfig(): KubeConfig | undefined {
  const files = (process.env.KUBECONFIG ?? '').split(delimiter).filter(Boolean);
  if (files.length > 0) return mergeKubeConfigs(files.map(readKubeConfigFile));
  const home = join(homedir(), '.kube', 'config');
  if (existsSync(home)) return readKubeConfigFile(home);
  return inClusterConfig();
}

export function readKubeConfigFile(file: string): KubeConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new KubeConfigError(`cannot read kubeconfig ${file}: ${(e as Error).message}`);
  }
  return parseKubeConfig(text, file);
}

/** Parses kubeconfig YAML; relative file paths in it are relative to `file`'s folder, as in kubectl. */
export function parseKubeConfig(text: string, file: string): KubeConfig {
  let doc: RawKubeConfig;
  try {
    doc = (parse(text) ?? {}) as RawKubeConfig;
  } catch (e) {
    throw new KubeConfigError(`kubeconfig ${file} is not valid YAML: ${(e as Error).message}`);
  }
  const dir = dirname(file);
  const absolute = (path: string) => (isAbsolute(path) ? path : join(dir, path));
  try {
    const clusters = newClusters(doc.clusters).map((c) => ({
      ...c,
      ...(c.caFile && { caFile: absolute(c.caFile) }),
    }));
    const users = newUsers(doc.users).map((u): KubeUser => {
      // client-node's reader drops kubectl's tokenFile: take it from the same entry, by name.
      const tokenFile = doc.users?.find((raw) => raw.name === u.name)?.user?.tokenFile;
      return {
        ...u,
        ...(u.certFile && { certFile: absolute(u.certFile) }),
        ...(u.keyFile && { keyFile: absolute(u.keyFile) }),
        ...(tokenFile && { tokenFile: absolute(tokenFile) }),
      };
    });
    return new KubeConfig(clusters, users, newContexts(doc.contexts), doc['current-context'] ?? '', file);
  } catch (e) {
    throw new KubeConfigError(`kubeconfig ${file}: ${(e as Error).message}`);
  }
}

interface RawKubeConfig {
  clusters?: unknown;
  users?: { name?: string; user?: { tokenFile?: string } }[];
  contexts?: unknown;
  'current-context'?: string;
}

/** kubectl's rule for $KUBECONFIG lists: the first file to define a name or a current context wins. */
function mergeKubeConfigs(configs: KubeConfig[]): KubeConfig {
  const firstByName = <T extends { name: string }>(lists: (readonly T[])[]): T[] => {
    const byName = new Map<string, T>();
    for (const list of lists)
      for (const item of list) if (!byName.has(item.name)) byName.set(item.name, item);
    return [...byName.values()];
  };
  return new KubeConfig(
    firstByName(configs.map((c) => c.clusters)),
    firstByName(configs.map((c) => c.users)),
    firstByName(configs.map((c) => c.contexts)),
    configs.find((c) => c.currentContext)?.currentContext ?? '',
    configs.map((c) => c.source).join(delimiter),
  );
}

/** The pod's ServiceAccount: its CA, its token (re-read, as the kubelet rotates it), its namespace. */
export function inClusterConfig(dir = SERVICE_ACCOUNT_DIR): KubeConfig | undefined {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT;
  if (!host || !port || !existsSync(join(dir, 'token'))) return undefined;
  const server = `https://${isIPv6(host) ? `[${host}]` : host}:${port}`;
  let namespace: string | undefined;
  try {
    namespace = readFileSync(join(dir, 'namespace'), 'utf8').trim();
  } catch {
    namespace = undefined;
  }
  return new KubeConfig(
    [{ name: 'in-cluster', server, caFile: join(dir, 'ca.crt'), skipTLSVerify: false }],
    [{ name: 'in-cluster', tokenFile: join(dir, 'token') }],
    [{ name: 'in-cluster', cluster: 'in-cluster', user: 'in-cluster', ...(namespace && { namespace }) }],
    'in-cluster',
    `in-cluster ServiceAccount (${dir})`,
  );
}

/**
 * A repository's policy: the namespaces and ServiceAccounts its transaction directories may use.
 * Safe by default: the default namespace only, and no ServiceAccount at all until an
 * administrator names one. The controller's own namespace and every kube-* namespace are never
 * allowed, whatever the configuration says. `janus run`, `janus validate` and `janus plan` build
 * the policy from the same flags, so pull-request CI reaches the verdict the cluster will.
 */
import { parseSopsKinds, SopsKindsError, sopsKindNames } from '../changes/sops-kinds.ts';
import { dnsLabelProblem, dnsSubdomainProblem } from './names.ts';

/** The controller's namespace when nothing else says which it is. */
export const DEFAULT_CONTROLLER_NAMESPACE = 'janus-system';

/** Where each part of the policy is configured, so messages can say how to change it. */
export const POLICY_SETTINGS = {
  defaultNamespace: { flag: '--default-namespace', env: 'JANUS_DEFAULT_NAMESPACE' },
  namespaces: { flag: '--allowed-namespaces', env: 'JANUS_ALLOWED_NAMESPACES' },
  serviceAccounts: { flag: '--allowed-service-accounts', env: 'JANUS_ALLOWED_SERVICE_ACCOUNTS' },
  sopsKinds: { flag: '--sops-kinds', env: 'JANUS_SOPS_KINDS' },
  clusterKinds: { flag: '--allowed-cluster-kinds', env: 'JANUS_ALLOWED_CLUSTER_KINDS' },
} as const;

export type PolicySetting = keyof typeof POLICY_SETTINGS;

/** One entry of --allowed-service-accounts. */
export interface ServiceAccountGrant {
  /** Undefined: the name in every namespace the repository may use. */
  readonly namespace?: string;
  readonly name: string;
}

export interface RepositoryPolicy {
  /** Namespace of a Transaction whose transaction.yaml names none. */
  readonly defaultNamespace: string;
  /** Every namespace the repository may use: the configured list, else the default namespace alone. */
  readonly namespaces: readonly string[];
  /** ServiceAccounts the repository may run transactions as; empty: none. */
  readonly serviceAccounts: readonly ServiceAccountGrant[];
  /** Never usable, whatever the lists say; neither is any kube-* namespace. */
  readonly controllerNamespace: string;
  /** Kinds besides Secret a SOPS-encrypted change file may target ("group/Kind"; src/changes/sops-kinds.ts). */
  readonly sopsKinds: readonly string[];
  /**
   * The cluster-scoped kinds a source may render ("group/Kind", "" for the core group);
   * undefined when unset: the ServiceAccount's RBAC alone decides (docs/sources.md, The policy).
   */
  readonly clusterKinds?: readonly string[] | undefined;
}

/** The policy as configured: lists as comma-separated text (a flag) or as arrays. */
export interface PolicySettings {
  defaultNamespace: string;
  /** Unset or empty: the default namespace only. */
  allowedNamespaces?: string | readonly string[] | undefined;
  /** Entries `name` or `namespace/name`; unset or empty: no ServiceAccount. */
  allowedServiceAccounts?: string | readonly string[] | undefined;
  /** Default janus-system. */
  controllerNamespace?: string | undefined;
  /** `Kind` or `Kind.group` entries; unset or empty: Secrets only. */
  sopsKinds?: string | readonly string[] | undefined;
  /** `Kind` (core group) or `group/Kind` entries; unset or empty: no list, RBAC decides. */
  clusterKinds?: string | readonly string[] | undefined;
}

/** A configuration the policy refuses; the message names the flag and its environment variable. */
export class PolicyError extends Error {
  override readonly name = 'PolicyError';
  readonly setting: PolicySetting;
  constructor(setting: PolicySetting, message: string) {
    const { flag, env } = POLICY_SETTINGS[setting];
    super(`${flag} (${env}): ${message}`);
    this.setting = setting;
  }
}

/** Checks and normalizes a configuration; throws PolicyError naming the setting at fault. */
export function repositoryPolicy(settings: PolicySettings): RepositoryPolicy {
  const controllerNamespace = settings.controllerNamespace || DEFAULT_CONTROLLER_NAMESPACE;
  const defaultNamespace = checkNamespace('defaultNamespace', settings.defaultNamespace, controllerNamespace);
  const listed = unique(
    entries(settings.allowedNamespaces).map((n) => checkNamespace('namespaces', n, controllerNamespace)),
  );
  const namespaces = listed.length > 0 ? listed : [defaultNamespace];
  const grants = unique(entries(settings.allowedServiceAccounts)).map((entry) =>
    checkGrant(entry, namespaces, controllerNamespace),
  );
  let sopsKinds: string[];
  try {
    sopsKinds = parseSopsKinds(settings.sopsKinds);
  } catch (e) {
    if (e instanceof SopsKindsError) throw new PolicyError('sopsKinds', e.message);
    throw e;
  }
  const clusterKinds = unique(entries(settings.clusterKinds)).map(checkClusterKind);
  return {
    defaultNamespace,
    namespaces,
    serviceAccounts: grants,
    controllerNamespace,
    sopsKinds,
    ...(clusterKinds.length > 0 && { clusterKinds }),
  };
}

const KIND = /^[A-Z][A-Za-z0-9]{0,62}$/;
const GROUP = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** An entry of --allowed-cluster-kinds, `Kind` or `group/Kind`, as its "group/Kind" key. */
function checkClusterKind(entry: string): string {
  const slash = entry.lastIndexOf('/');
  const group = slash < 0 ? '' : entry.slice(0, slash);
  const kind = entry.slice(slash + 1);
  if (!KIND.test(kind) || (slash >= 0 && (!GROUP.test(group) || group.length > 253))) {
    throw new PolicyError(
      'clusterKinds',
      `${JSON.stringify(entry)} is not a kind: write Kind for the core group, group/Kind otherwise (e.g. apiextensions.k8s.io/CustomResourceDefinition); no wildcard`,
    );
  }
  return `${group}/${kind}`;
}

/** "Namespace", "apiextensions.k8s.io/CustomResourceDefinition": a "group/Kind" key as the setting writes it. */
export function clusterKindName(key: string): string {
  return key.startsWith('/') ? key.slice(1) : key;
}

/**
 * Why a source may not render a cluster-scoped object of this group and kind, as the end of a
 * sentence whose subject is the object; undefined when it may (always, when the list is unset).
 */
export function clusterKindRefusal(
  policy: RepositoryPolicy,
  group: string,
  kind: string,
): string | undefined {
  if (policy.clusterKinds === undefined || policy.clusterKinds.includes(`${group}/${kind}`)) return undefined;
  const { flag, env } = POLICY_SETTINGS.clusterKinds;
  return `is cluster-scoped, and its kind is not allowed for this repository (allowed: ${policy.clusterKinds.map(clusterKindName).join(', ')}; set by ${flag} or ${env})`;
}

/** Why no repository may ever use `namespace` ("is …"), or undefined. */
export function reservedNamespaceReason(namespace: string, controllerNamespace: string): string | undefined {
  if (namespace === controllerNamespace) return "is the controller's own namespace";
  if (namespace.startsWith('kube-')) return 'is a Kubernetes system namespace (kube-*)';
  return undefined;
}

/**
 * Why the repository may not use `namespace`, as the end of a sentence whose subject is the
 * namespace ("… is not allowed for this repository (allowed: …)"); undefined when it may.
 */
export function namespaceRefusal(policy: RepositoryPolicy, namespace: string): string | undefined {
  const reserved = reservedNamespaceReason(namespace, policy.controllerNamespace);
  if (reserved) return `${reserved}: no repository may use it`;
  if (policy.namespaces.includes(namespace)) return undefined;
  const { flag, env } = POLICY_SETTINGS.namespaces;
  return `is not allowed for this repository (allowed: ${policy.namespaces.join(', ')}; set by ${flag} or ${env})`;
}

/**
 * The namespace a rejected directory's record is filed and notified under: the one its
 * transaction.yaml names (or the default) when the repository may use it; else the controller's,
 * as a rejection of the repository's own. Anyone who may push writes transaction.yaml, so a
 * namespace the policy refused is never where their rejection is heard (its notification routes,
 * its Alertmanager alerts): the platform team's routes for the controller's namespace are.
 */
export function rejectionNamespace(
  policy: RepositoryPolicy,
  namespace: string,
): { namespace: string; refused?: string } {
  if (namespaceRefusal(policy, namespace) === undefined) return { namespace };
  return { namespace: policy.controllerNamespace, refused: namespace };
}

/** Why a transaction in `namespace` may not run as the ServiceAccount `name`; undefined when it may. */
export function serviceAccountRefusal(
  policy: RepositoryPolicy,
  namespace: string,
  name: string,
): string | undefined {
  if (policy.serviceAccounts.some((g) => g.name === name && (g.namespace ?? namespace) === namespace)) {
    return undefined;
  }
  const { flag, env } = POLICY_SETTINGS.serviceAccounts;
  const subject = `ServiceAccount ${JSON.stringify(`${namespace}/${name}`)} is not allowed for this repository`;
  if (policy.serviceAccounts.length === 0) {
    return (
      `${subject}: it may use no ServiceAccount until an administrator grants one with ${flag} or ` +
      `${env} (e.g. ${JSON.stringify(name)} in every allowed namespace, or ${JSON.stringify(`${namespace}/${name}`)})`
    );
  }
  return `${subject} (allowed: ${policy.serviceAccounts.map(formatGrant).join(', ')}; set by ${flag} or ${env})`;
}

/** `namespace/name`, or `name` for a grant in every allowed namespace. */
export function formatGrant(grant: ServiceAccountGrant): string {
  return grant.namespace === undefined ? grant.name : `${grant.namespace}/${grant.name}`;
}

/** The policy as people read it, e.g. in a log line. */
export function describePolicy(policy: RepositoryPolicy): {
  defaultNamespace: string;
  namespaces: string[];
  serviceAccounts: string[];
  controllerNamespace: string;
  sopsKinds: string[];
  clusterKinds: string[] | 'unset';
} {
  return {
    defaultNamespace: policy.defaultNamespace,
    namespaces: [...policy.namespaces],
    serviceAccounts: policy.serviceAccounts.map(formatGrant),
    controllerNamespace: policy.controllerNamespace,
    sopsKinds: sopsKindNames(policy.sopsKinds),
    clusterKinds: policy.clusterKinds?.map(clusterKindName) ?? 'unset',
  };
}

function entries(value: string | readonly string[] | undefined): string[] {
  const list = typeof value === 'string' ? value.split(',') : (value ?? []);
  return list.map((v) => v.trim()).filter((v) => v !== '');
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

function checkNamespace(setting: PolicySetting, value: string, controllerNamespace: string): string {
  if (value.includes('*')) {
    throw new PolicyError(setting, `"${value}": there is no wildcard; name each namespace`);
  }
  const problem = dnsLabelProblem(value);
  if (problem) throw new PolicyError(setting, `"${value}" ${problem}`);
  const reserved = reservedNamespaceReason(value, controllerNamespace);
  if (reserved) throw new PolicyError(setting, `"${value}" ${reserved}: no repository may use it`);
  return value;
}

function checkGrant(
  entry: string,
  namespaces: readonly string[],
  controllerNamespace: string,
): ServiceAccountGrant {
  if (entry.includes('*')) {
    throw new PolicyError(
      'serviceAccounts',
      `"${entry}": there is no wildcard; name each ServiceAccount, as name or namespace/name`,
    );
  }
  const parts = entry.split('/');
  if (parts.length > 2) {
    throw new PolicyError('serviceAccounts', `"${entry}": expected name or namespace/name`);
  }
  const [first = '', second] = parts;
  const name = second ?? first;
  const namespace = second === undefined ? undefined : first;
  const nameProblem = dnsSubdomainProblem(name);
  if (nameProblem) throw new PolicyError('serviceAccounts', `"${entry}": the name ${nameProblem}`);
  if (namespace !== undefined) {
    const problem = dnsLabelProblem(namespace);
    if (problem) throw new PolicyError('serviceAccounts', `"${entry}": the namespace ${problem}`);
    const reserved = reservedNamespaceReason(namespace, controllerNamespace);
    if (reserved) {
      throw new PolicyError(
        'serviceAccounts',
        `"${entry}": "${namespace}" ${reserved}: no repository may use it`,
      );
    }
    if (!namespaces.includes(namespace)) {
      const { flag } = POLICY_SETTINGS.namespaces;
      throw new PolicyError(
        'serviceAccounts',
        `"${entry}": "${namespace}" is not an allowed namespace (allowed: ${namespaces.join(', ')}); add it to ${flag}`,
      );
    }
  }
  return namespace === undefined ? { name } : { namespace, name };
}

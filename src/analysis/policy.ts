/**
 * What a tenant's analysis may make the controller do, by the platform team's settings. One
 * controller serves every tenant of a cluster with rights and a network position no tenant has:
 * a check queries only the addresses the platform team allowed, and a templateRef names only
 * the Transaction's own namespace or one the platform team shares templates from. Each refusal
 * names the address or template and the setting that decides it. Pure.
 */
import type { AnalysisCheck, AnalysisRef } from '../api/v1alpha1/analysis.ts';
import { globMatches } from '../text/glob.ts';
import { type AllowedAddress, allowedFor, isAllowedAddress } from './allowed-addresses.ts';
import { addressOf, DEFAULT_REQUEST_TIMEOUT_MS } from './http-get.ts';
import { queryUrl } from './prometheus-client.ts';
import { templateName } from './templates.ts';

export interface AnalysisPolicy {
  /** The prefixes a check may query (--analysis-allowed-addresses); none: no check may query. */
  readonly allowedAddresses: readonly AllowedAddress[];
  /**
   * Namespaces whose AnalysisTemplates every Transaction may use, besides its own: the
   * controller's namespace and those of --analysis-template-namespaces.
   */
  readonly templateNamespaces: readonly string[];
  /** How long a namespace's measurement waits for its answer (--analysis-timeout); 10 s when undefined. */
  readonly timeouts?: AnalysisTimeouts | undefined;
}

/**
 * A measurement's request timeout per namespace (--analysis-timeout): Prometheus stops
 * evaluating the query then too (its `timeout` parameter), and the measurement frees its slot, so
 * a namespace given a short one costs Prometheus and the other namespaces' checks little.
 */
export interface AnalysisTimeouts {
  /** For a namespace no entry names. */
  readonly defaultMs: number;
  /** `<namespace glob>=<duration>` entries in the order written: the first that matches is the namespace's. */
  readonly namespaces: readonly { readonly glob: string; readonly ms: number }[];
}

/** The request timeout of a measurement of a Transaction in `namespace`. */
export function timeoutFor(policy: AnalysisPolicy, namespace: string): number {
  const timeouts = policy.timeouts;
  if (!timeouts) return DEFAULT_REQUEST_TIMEOUT_MS;
  return timeouts.namespaces.find((entry) => globMatches(entry.glob, namespace))?.ms ?? timeouts.defaultMs;
}

export const ALLOWED_ADDRESSES_SETTING = '--analysis-allowed-addresses, JANUS_ANALYSIS_ALLOWED_ADDRESSES';
export const TEMPLATE_NAMESPACES_SETTING =
  '--analysis-template-namespaces, JANUS_ANALYSIS_TEMPLATE_NAMESPACES';

/** At most this many allowed prefixes are named in a refusal; the status message is bounded. */
const NAMED_IN_REFUSAL = 3;

/** The URL a measurement of the check would GET; undefined for a check with neither kind. */
export function requestUrlOf(check: AnalysisCheck): string | undefined {
  if (check.prometheus) return queryUrl(check.prometheus.address, check.prometheus.query, undefined);
  return check.http?.url;
}

/**
 * Why the check, of a Transaction in `namespace`, may not be measured by this controller, or
 * undefined when it may. The refusal names only the addresses allowed for that namespace: those
 * of other teams are theirs to know.
 */
export function checkAddressRefusal(
  check: AnalysisCheck,
  policy: AnalysisPolicy,
  namespace: string,
): string | undefined {
  const written = check.prometheus?.address ?? check.http?.url;
  if (written === undefined) return undefined;
  let url: string | undefined;
  try {
    url = requestUrlOf(check);
  } catch {
    url = undefined; // not a URL: refused below, like any address not allowed
  }
  if (url !== undefined && isAllowedAddress(url, policy.allowedAddresses, namespace)) return undefined;
  return `check "${check.name}": the controller does not query ${addressOf(written)}: it is not under an address the platform team allowed for namespace "${namespace}" (${ALLOWED_ADDRESSES_SETTING}; ${allowedList(policy, namespace)})`;
}

function allowedList(policy: AnalysisPolicy, namespace: string): string {
  const all = allowedFor(policy.allowedAddresses, namespace).map((a) => a.text);
  if (all.length === 0) return 'none is allowed';
  const more = all.length - NAMED_IN_REFUSAL;
  return `allowed: ${all.slice(0, NAMED_IN_REFUSAL).join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/** Why the item's templateRef may not be read, or undefined when it may (or it has none). */
export function templateNamespaceRefusal(
  ref: AnalysisRef,
  transactionNamespace: string,
  policy: AnalysisPolicy,
): string | undefined {
  const namespace = ref.templateRef?.namespace;
  if (namespace === undefined || namespace === transactionNamespace) return undefined;
  if (policy.templateNamespaces.includes(namespace)) return undefined;
  const shared = policy.templateNamespaces.map((n) => `"${n}"`).join(', ') || 'none';
  return `${templateName(ref, transactionNamespace)} may not be used: a Transaction uses templates of its own namespace "${transactionNamespace}" and of those the platform team shares (${TEMPLATE_NAMESPACES_SETTING}: ${shared})`;
}

/**
 * What can be refused before anything changes (the prepare stage): a templateRef's namespace,
 * and an inline check's address. A template's addresses are known only once it is read, after
 * its arguments are filled: the window judges those (checkAddressRefusal on the resolved checks).
 */
export function analysisRefusal(
  refs: readonly AnalysisRef[],
  transactionNamespace: string,
  policy: AnalysisPolicy,
): string | undefined {
  for (const ref of refs) {
    const refusal = ref.check
      ? checkAddressRefusal(ref.check, policy, transactionNamespace)
      : templateNamespaceRefusal(ref, transactionNamespace, policy);
    if (refusal) return refusal;
  }
  return undefined;
}

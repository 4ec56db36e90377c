/** Kubernetes name and duration rules, checked offline so errors show up in pull-request CI. */

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const API_VERSION = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?v[0-9]+((alpha|beta)[0-9]+)?$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;

/** Returns why `value` is not a DNS-1123 label (Namespace and Transaction names), or undefined. */
export function dnsLabelProblem(value: string): string | undefined {
  if (value.length > 63) return `must be at most 63 characters (has ${value.length})`;
  if (!DNS_LABEL.test(value)) {
    return 'must be a DNS-1123 label: lower-case letters, digits and "-", starting and ending with a letter or digit';
  }
  return undefined;
}

/** Returns why `value` is not a DNS-1123 subdomain (most object names), or undefined. */
export function dnsSubdomainProblem(value: string): string | undefined {
  if (value.length > 253) return `must be at most 253 characters (has ${value.length})`;
  if (!DNS_SUBDOMAIN.test(value)) {
    return 'must be a DNS-1123 subdomain: lower-case letters, digits, "-" and ".", starting and ending with a letter or digit';
  }
  return undefined;
}

export function apiVersionProblem(value: string): string | undefined {
  return API_VERSION.test(value) ? undefined : 'must look like "v1" or "<group>/<version>", e.g. "apps/v1"';
}

export function kindProblem(value: string): string | undefined {
  return KIND.test(value) && value.length <= 63 ? undefined : 'must be a CamelCase kind such as "ConfigMap"';
}

/** The API group of an apiVersion: "" for the core group ("v1"). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** Parses a Go duration ("90s", "1h30m") into milliseconds; undefined if it does not parse. */
export { tryParseDuration as parseDuration } from '../api/duration.ts';

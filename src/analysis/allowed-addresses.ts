/**
 * The addresses a check may make the controller query (--analysis-allowed-addresses): prefixes
 * scheme://host[:port][/path] a platform team lists. The controller is shared by every tenant;
 * without this, a tenant's check could make it GET anything it can reach (the cloud metadata
 * address, the kube-apiserver, other tenants' services) and show the answer in status.
 *
 * Matched on the parsed, normalized URL (WHATWG, as fetch parses it), never on its text: the
 * scheme, the host lowercased (IP addresses in their canonical form, a percent-encoded host
 * decoded), the port with its default made explicit, and the path as decoded segments, dot
 * segments resolved, a prefix on a segment boundary. An encoded slash or backslash in a path is
 * refused outright: a server may decode it into a path outside the prefix. A trailing dot is
 * another name (resolved without search domains), so it must be listed as such.
 *
 * An entry may be for some namespaces only, `<namespace glob>=<prefix>` (`team-a=http://prom-a:9090`,
 * `team-b-*=http://prom-b:9090`): a check of a Transaction in another namespace may not query it,
 * so team A cannot make the controller query team B's metrics proxy. An entry without a glob is
 * for every namespace, as every entry was before. Pure.
 */
import { globMatches, isNamespaceGlob } from '../text/glob.ts';

/** One entry of the list, parsed. */
export interface AllowedAddress {
  /** As the platform team wrote it, for messages (without its namespace glob). */
  readonly text: string;
  /** The namespaces whose checks may query it (a glob); undefined: every namespace. */
  readonly namespaces?: string | undefined;
  readonly scheme: 'http:' | 'https:';
  /** Lowercased; an IPv6 address in brackets, canonical. */
  readonly host: string;
  readonly port: number;
  /** The path prefix's decoded segments; none: every path. */
  readonly segments: readonly string[];
}

/** An entry of the setting that is not an http(s) prefix: names it. */
export class AllowedAddressError extends Error {
  override readonly name = 'AllowedAddressError';
}

const DEFAULT_PORTS = { 'http:': 80, 'https:': 443 } as const;

/** The comma-separated list; unset or empty allows nothing. Throws AllowedAddressError. */
export function parseAllowedAddresses(list: string | undefined): AllowedAddress[] {
  return (list ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map(parseAllowedAddress);
}

function parseAllowedAddress(entry: string): AllowedAddress {
  // A URL's scheme has a ":" before any "=", a glob none: "team-a=http://…" is for team-a.
  const scoped = /^([a-z0-9*?-]+)=(.*)$/.exec(entry);
  const text = scoped ? (scoped[2] ?? '').trim() : entry;
  const namespaces = scoped?.[1];
  if (namespaces !== undefined && !isNamespaceGlob(namespaces)) {
    throw new AllowedAddressError(
      `${JSON.stringify(entry)}: ${JSON.stringify(namespaces)} is not a namespace or a glob of namespaces (letters, digits, "-", "*" and "?")`,
    );
  }
  const refuse = (why: string) =>
    new AllowedAddressError(
      `${JSON.stringify(text)} is not an address prefix scheme://host[:port][/path]: ${why}`,
    );
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refuse('not a URL');
  }
  if (url.username || url.password) throw refuse('credentials in an address are never used');
  if (url.search || url.hash || text.includes('?') || text.includes('#'))
    throw refuse('a prefix has no query or fragment');
  if (url.hostname.includes('*')) throw refuse('no wildcard: list each host');
  const address = normalized(url);
  if (!address) throw refuse('only http and https, a host, and a path without encoded "/" or "\\"');
  return { text, ...(namespaces !== undefined && { namespaces }), ...address };
}

/** The entries a check of a Transaction in `namespace` may query. */
export function allowedFor(allowed: readonly AllowedAddress[], namespace: string): AllowedAddress[] {
  return allowed.filter((a) => a.namespaces === undefined || globMatches(a.namespaces, namespace));
}

/**
 * Whether a check of a Transaction in `namespace` may query `url`: under one of the prefixes
 * allowed for that namespace (allowedFor). Anything unparsable is not.
 */
export function isAllowedAddress(
  url: string,
  allowed: readonly AllowedAddress[],
  namespace: string,
): boolean {
  const mine = allowedFor(allowed, namespace);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (parsed.username || parsed.password) return false;
  const address = normalized(parsed);
  return address !== undefined && mine.some((prefix) => isUnder(address, prefix));
}

type Normalized = Omit<AllowedAddress, 'text'>;

function normalized(url: URL): Normalized | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.hostname === '') return undefined;
  const segments = pathSegments(url.pathname);
  if (!segments) return undefined;
  return {
    scheme: url.protocol,
    host: url.hostname.toLowerCase(),
    port: url.port === '' ? DEFAULT_PORTS[url.protocol] : Number(url.port),
    segments,
  };
}

/**
 * The decoded segments of a path WHATWG has already resolved ("/a/../b", "%2e%2e" and "\"
 * included); undefined when one still decodes to a slash, a backslash or a dot segment, or
 * does not decode: what a server would make of those is its own business.
 */
function pathSegments(pathname: string): string[] | undefined {
  const raw = pathname.split('/').slice(1);
  if (raw.at(-1) === '') raw.pop(); // "/prometheus/" is the prefix "/prometheus"
  const segments: string[] = [];
  for (const segment of raw) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return undefined;
    }
    if (decoded.includes('/') || decoded.includes('\\') || decoded === '.' || decoded === '..')
      return undefined;
    segments.push(decoded);
  }
  return segments;
}

function isUnder(address: Normalized, prefix: AllowedAddress): boolean {
  return (
    address.scheme === prefix.scheme &&
    address.host === prefix.host &&
    address.port === prefix.port &&
    prefix.segments.length <= address.segments.length &&
    prefix.segments.every((segment, i) => address.segments[i] === segment)
  );
}

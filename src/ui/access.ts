/**
 * Who may use the web view: only the browser of the person who started `janus ui`. The server
 * binds 127.0.0.1, but any local user and any web page open in that browser can reach
 * 127.0.0.1 too, so every request must also
 *
 * - name this server in its Host header (127.0.0.1:<port> or localhost:<port>): a page on a
 *   hostile domain that re-binds its name to 127.0.0.1 sends its own name there (DNS rebinding);
 * - carry the per-start secret: once in the URL `janus ui` prints (`/?token=…`), which the
 *   server trades for an HttpOnly, SameSite=Strict cookie and a redirect that drops it from the
 *   address bar; then in that cookie. Another local user does not know it; another site's page
 *   cannot read it, and a cross-site request does not send it;
 * - when it changes anything (POST), come from this origin: Origin must be this server's, so a
 *   form on another page cannot post here even if a cookie were sent. No CORS header is ever set.
 *
 * Pure: the server asks, then answers as told.
 */
import { timingSafeEqual } from 'node:crypto';

export interface UiAccess {
  port: number;
  /** The per-start secret, URL-safe. */
  token: string;
}

/** The parts of a request the verdict depends on. */
export interface RequestFacts {
  method: string;
  /** Path and query, as in the request line. */
  url: string;
  host: string | undefined;
  origin: string | undefined;
  cookie: string | undefined;
}

export type AccessVerdict =
  | { kind: 'allow' }
  /** The secret in the URL was right: set the cookie and send the browser to `location` (the same URL without it). */
  | { kind: 'login'; setCookie: string; location: string }
  | { kind: 'deny'; status: 400 | 401 | 403 | 405; message: string };

const MUTATING = new Set(['POST']);
const READING = new Set(['GET', 'HEAD']);

/** One cookie per server: two `janus ui` on one machine (two ports, one cookie jar) keep theirs apart. */
export const cookieName = (port: number) => `janus-ui-${port}`;

/** The origins this server is reached by: what Host and Origin may name. */
export function ownOrigins(port: number): string[] {
  return [`http://127.0.0.1:${port}`, `http://localhost:${port}`];
}

export function judgeRequest(req: RequestFacts, access: UiAccess): AccessVerdict {
  const origins = ownOrigins(access.port);
  if (!req.host || !origins.includes(`http://${req.host.toLowerCase()}`)) {
    return {
      kind: 'deny',
      status: 403,
      message: `this is janus ui on 127.0.0.1:${access.port}; a request for host "${printableHost(req.host)}" is refused`,
    };
  }
  if (!READING.has(req.method) && !MUTATING.has(req.method)) {
    return { kind: 'deny', status: 405, message: `method ${req.method} is not served` };
  }
  if (req.origin !== undefined && !origins.includes(req.origin)) {
    return { kind: 'deny', status: 403, message: 'a request from another origin is refused' };
  }
  if (MUTATING.has(req.method) && req.origin === undefined) {
    return { kind: 'deny', status: 403, message: 'a change must come from this page (no Origin header)' };
  }
  const url = new URL(req.url, origins[0]);
  const offered = url.searchParams.get('token');
  if (offered !== null && READING.has(req.method)) {
    if (!sameSecret(offered, access.token)) {
      return { kind: 'deny', status: 401, message: 'wrong token: open the URL janus ui printed' };
    }
    url.searchParams.delete('token');
    return {
      kind: 'login',
      setCookie: `${cookieName(access.port)}=${access.token}; HttpOnly; SameSite=Strict; Path=/`,
      location: `${url.pathname}${url.search}`,
    };
  }
  const cookie = cookieValue(req.cookie, cookieName(access.port));
  if (cookie === undefined || !sameSecret(cookie, access.token)) {
    return {
      kind: 'deny',
      status: 401,
      message: 'not signed in: open the URL janus ui printed (it carries a secret made at its start)',
    };
  }
  return { kind: 'allow' };
}

function sameSecret(offered: string, token: string): boolean {
  const a = Buffer.from(offered);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The value of cookie `name` in a Cookie header, if there is exactly one. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  const values = (header ?? '')
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair.startsWith(`${name}=`))
    .map((pair) => pair.slice(name.length + 1));
  return values.length === 1 ? values[0] : undefined;
}

const printableHost = (host: string | undefined) => (host ?? '').replace(/[^\w.:[\]-]/g, '?').slice(0, 100);

/**
 * Headers on every answer: a CSP that runs only this server's scripts (no inline script, no
 * eval, nothing from elsewhere: the page works offline) and cannot be framed; no Referer to the
 * forge links; no sniffing; nothing cached (what the API server said is the user's to see now,
 * not the next user's of this browser profile).
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Cache-Control': 'no-store',
};

/**
 * A controller's API requests, read back from its debug log (src/manager/api-request-log.ts: one
 * line per request, numbered as JANUS_TEST_EXIT_AFTER_REQUESTS counts them), each with the phase
 * the Transaction's status showed when it was made. How a crash test picks the requests to kill
 * the controller after from an uninterrupted run's log. Pure.
 */
import type { Phase } from '../../../src/api/v1alpha1/index.ts';

export interface LoggedRequest {
  n: number;
  method: string;
  path: string;
  status: number;
  /** Impersonated: made as the Transaction's ServiceAccount. */
  asServiceAccount: boolean;
  /** The phase the status last showed before the request (Pending before any status write). */
  phase: Phase;
}

/** A request to kill the controller right after, named for the test's report. */
export interface KillPoint {
  name: string;
  k: number;
}

interface LogLine {
  msg?: string;
  n?: number;
  method?: string;
  path?: string;
  status?: number;
  as?: string;
  phase?: Phase;
}

function linesOf(log: string): LogLine[] {
  return log.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
}

export function requestsOf(log: string): LoggedRequest[] {
  const requests: LoggedRequest[] = [];
  let phase: Phase = 'Pending';
  for (const line of linesOf(log)) {
    if (line.msg === 'status written' && line.phase) phase = line.phase;
    // A watch is logged with the number of the request before it: it is not counted.
    if (line.msg !== 'api request' || line.n === undefined || line.method === 'WATCH') continue;
    requests.push({
      n: line.n,
      method: line.method ?? '',
      path: line.path ?? '',
      status: line.status ?? 0,
      asServiceAccount: line.as !== undefined,
      phase,
    });
  }
  return requests;
}

/**
 * The number of the API request after which the status first showed `phase`: with
 * JANUS_TEST_EXIT_AFTER_REQUESTS set to it, the controller dies right after entering that phase,
 * which lets a test act "between two steps" and then restart it.
 */
export function requestNumberAt(log: string, phase: Phase): number {
  let last = 0;
  for (const line of linesOf(log)) {
    if (line.msg === 'api request' && line.n !== undefined) last = line.n;
    else if (line.msg === 'status written' && line.phase === phase) return last;
  }
  throw new Error(`the log never shows phase ${phase}`);
}

/** The number of the first API request, after the status showed `phase`, whose path ends with `pathSuffix`. */
export function requestNumberOf(log: string, phase: Phase, pathSuffix: string): number {
  const requests = requestsOf(log);
  const from = requests.findIndex((r) => r.phase === phase);
  const found = from < 0 ? undefined : requests.slice(from).find((r) => r.path.endsWith(pathSuffix));
  if (!found) throw new Error(`no request to …${pathSuffix} after phase ${phase}`);
  return found.n;
}

/** Which request a kill point is: the first one (or the `nth`, or the last) that matches. */
export interface PointSpec {
  name: string;
  phase: Phase;
  method?: string;
  /** How the path ends. */
  path?: string;
  asServiceAccount?: boolean;
  /** Refused by the API server (a 4xx or 5xx answer). */
  refused?: boolean;
  /** 1 (default) for the first match, -1 for the last. */
  nth?: number;
}

function pick(requests: readonly LoggedRequest[], spec: PointSpec): KillPoint {
  const matches = requests.filter(
    (r) =>
      r.phase === spec.phase &&
      (spec.method === undefined || r.method === spec.method) &&
      (spec.path === undefined || r.path.endsWith(spec.path)) &&
      (spec.asServiceAccount === undefined || r.asServiceAccount === spec.asServiceAccount) &&
      (spec.refused === undefined || r.status >= 400 === spec.refused),
  );
  const nth = spec.nth ?? 1;
  const found = nth > 0 ? matches[nth - 1] : matches[matches.length + nth];
  if (!found) {
    const { name: _, ...what } = spec;
    throw new Error(`kill point "${spec.name}": no request ${JSON.stringify(what)} in the log`);
  }
  return { name: spec.name, k: found.n };
}

/**
 * The kill points of `specs` in an uninterrupted run's log, and one right after each status write
 * that entered a new phase (the saga's stage boundaries), in request order.
 */
export function killPoints(log: string, specs: readonly PointSpec[]): KillPoint[] {
  const requests = requestsOf(log);
  const boundaries = requests.flatMap((r, i) => {
    const next = requests[i + 1];
    return next && next.phase !== r.phase ? [{ name: `→ ${next.phase}`, k: r.n }] : [];
  });
  const byK = new Map<number, KillPoint>();
  for (const p of [...boundaries, ...specs.map((s) => pick(requests, s))]) {
    const same = byK.get(p.k);
    byK.set(p.k, same ? { k: p.k, name: `${same.name}, ${p.name}` } : p);
  }
  return [...byK.values()].sort((a, b) => a.k - b.k);
}

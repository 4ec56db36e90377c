/**
 * Errors from the Kubernetes API, parsed from its Status body so callers can branch on `reason`,
 * and the error of an API server that could not be reached at all.
 */
import { EXPECTED_ERROR } from '../log/describe-error.ts';
import { isServerAbsentCode } from '../log/network-codes.ts';

export interface StatusCause {
  type?: string;
  message?: string;
  field?: string;
}

export interface StatusBody {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: {
    name?: string;
    group?: string;
    kind?: string;
    causes?: StatusCause[];
    retryAfterSeconds?: number;
  };
}

export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  /** The API server refused or failed: its message says why; a stack trace would not. */
  readonly [EXPECTED_ERROR] = true;
  readonly status: number;
  readonly reason: string;
  readonly details: StatusBody['details'];
  readonly method: string;
  readonly path: string;

  constructor(method: string, path: string, status: number, body: StatusBody | undefined, fallbackText = '') {
    const reason = body?.reason ?? reasonForStatus(status);
    const message = body?.message ?? (fallbackText.trim().slice(0, 500) || `HTTP ${status}`);
    super(`${method} ${path}: ${status} ${reason}: ${message}`);
    this.status = status;
    this.reason = reason;
    this.details = body?.details;
    this.method = method;
    this.path = path;
  }

  /** The server's message alone, for conditions and events. */
  get serverMessage(): string {
    const prefix = `${this.method} ${this.path}: ${this.status} ${this.reason}: `;
    return this.message.startsWith(prefix) ? this.message.slice(prefix.length) : this.message;
  }
}

/**
 * No answer from the API server: the connection was refused or reset, the name did not resolve,
 * TLS failed, or nothing came back in time. Named after the server and the kubeconfig context, as
 * kubectl does: `cannot reach the API server https://127.0.0.1:6443 (context "kind-dev"): connect
 * ECONNREFUSED`. The original error is the `cause`.
 */
export class KubeConnectionError extends Error {
  override readonly name = 'KubeConnectionError';
  readonly [EXPECTED_ERROR] = true;
  /** The server URL, as the kubeconfig gives it. */
  readonly server: string;
  readonly context: string;
  /** The network error's code, e.g. `ECONNREFUSED`, `ENOTFOUND`, `ETIMEDOUT`. */
  readonly code: string | undefined;

  constructor(server: string, context: string, cause: unknown) {
    super(`cannot reach the API server ${server} (context "${context}"): ${networkDetail(cause)}`, { cause });
    this.server = server;
    this.context = context;
    const code = (cause as { code?: unknown } | undefined)?.code;
    this.code = typeof code === 'string' ? code : undefined;
  }
}

/**
 * `connect ECONNREFUSED` rather than `connect ECONNREFUSED 127.0.0.1:6443`: the address is the
 * server's, already named. Errors without a syscall (`socket hang up`, TLS) keep their message.
 */
function networkDetail(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const { code, syscall } = cause as NodeJS.ErrnoException;
  return typeof code === 'string' && typeof syscall === 'string' ? `${syscall} ${code}` : cause.message;
}

function reasonForStatus(status: number): string {
  switch (status) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 409:
      return 'Conflict';
    case 410:
      return 'Expired';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 500:
      return 'InternalError';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return 'Unknown';
  }
}

const hasStatus = (e: unknown, status: number): e is KubeApiError =>
  e instanceof KubeApiError && e.status === status;

export const isNotFound = (e: unknown): e is KubeApiError => hasStatus(e, 404);
export const isForbidden = (e: unknown): e is KubeApiError => hasStatus(e, 403);
export const isGone = (e: unknown): e is KubeApiError => hasStatus(e, 410);
export const isInvalid = (e: unknown): e is KubeApiError => hasStatus(e, 422);
export const isAlreadyExists = (e: unknown): e is KubeApiError =>
  hasStatus(e, 409) && e.reason === 'AlreadyExists';
/** A stale resourceVersion or failed precondition: someone else wrote first. */
export const isConflict = (e: unknown): e is KubeApiError =>
  hasStatus(e, 409) && e.reason !== 'AlreadyExists';

/**
 * A server that is not there, or not the server the kubeconfig trusts (a TLS failure): unlike
 * a dropped connection or a busy server, waiting a few seconds changes nothing for a one-shot
 * command, so the CLI says so at once, as kubectl does. Long-running processes still retry
 * (the API server may be restarting).
 */
export function isServerAbsent(e: unknown): boolean {
  if (!(e instanceof KubeConnectionError) || e.code === undefined) return false;
  return isServerAbsentCode(e.code);
}

/** Errors worth retrying unchanged: throttling, server trouble, and the network. */
export function isTransient(e: unknown): boolean {
  if (e instanceof KubeApiError) return e.status === 429 || (e.status >= 500 && !isMalformedApply(e));
  return e instanceof Error && !(e instanceof KubeApiError);
}

/**
 * A server-side apply whose object does not fit its kind's schema (a number where a string goes,
 * a field the schema does not declare, two items of a keyed list with one key) is answered 500
 * by kube-apiserver (v1.36 too; kubernetes/kubernetes#139253, #122480), though it is the
 * request's fault and the same request fails the same way every time: not a reason to retry.
 */
export function isMalformedApply(e: unknown): boolean {
  return (
    e instanceof KubeApiError && e.status === 500 && /failed to create typed patch object/.test(e.message)
  );
}

/** What the API server refused about a request: the fields it named, and its words. */
export interface Refusal {
  fields: string[];
  message: string;
}

/**
 * The request itself was refused, so sending it again unchanged cannot succeed: invalid (422),
 * malformed (400), too large (413, or etcd's "request is too large" as a 500), or denied by an
 * admission policy or RBAC (403). Undefined for every other error.
 */
export function refusalOf(e: unknown): Refusal | undefined {
  if (!(e instanceof KubeApiError)) return undefined;
  const refused =
    [400, 403, 413, 422].includes(e.status) ||
    (e.status === 500 && /too large/i.test(e.message)) ||
    isMalformedApply(e);
  if (!refused) return undefined;
  const fields = (e.details?.causes ?? []).flatMap((c) => (c.field ? [c.field] : []));
  return { fields: [...new Set(fields)], message: e.serverMessage };
}

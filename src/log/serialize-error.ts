/**
 * Error serializer for log records. HTTP client errors carry the whole response: the
 * @kubernetes/client-node ApiException embeds the body and every response header in its
 * message, and isomorphic-git's HttpError keeps the response body in `data`. Logging them as
 * they are dumps kilobytes per line and can leak what a server echoed back, so only an allowlist
 * of fields is kept: name, message, code, status, reason, stack and cause.
 */

export interface SerializedError {
  readonly name: string;
  readonly message: string;
  /** A machine-readable code such as `ECONNREFUSED` or isomorphic-git's `HttpError`. */
  readonly code?: string | number;
  /** HTTP status code, when the error came from an HTTP response. */
  readonly status?: number;
  /** Kubernetes Status `reason` (e.g. `NotFound`, `Conflict`) or the HTTP status text. */
  readonly reason?: string;
  readonly stack?: string;
  readonly cause?: SerializedError;
}

type ErrorLike = Error & Record<string, unknown>;

const MAX_MESSAGE_CHARS = 1_000;
const MAX_CAUSE_DEPTH = 3;
/** `scheme://user:password@host`: credentials that must never reach a log line. */
const URL_CREDENTIALS = /(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi;

export function serializeError(value: unknown): SerializedError {
  return serialize(value, 0);
}

function serialize(value: unknown, depth: number): SerializedError {
  if (!(value instanceof Error)) {
    return { name: typeof value, message: truncate(scrubCredentials(String(value))) };
  }
  const err = value as ErrorLike;
  const name = errorName(err);
  const http = httpDetails(err);
  const message = truncate(scrubCredentials(http.message ?? err.message));
  const stack = rewriteStack(err, message);
  const code = err.code === http.status ? undefined : err.code;
  const cause =
    err.cause !== undefined && depth < MAX_CAUSE_DEPTH ? serialize(err.cause, depth + 1) : undefined;
  return {
    name,
    message,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(http.status !== undefined ? { status: http.status } : {}),
    ...(http.reason !== undefined ? { reason: http.reason } : {}),
    ...(stack !== undefined ? { stack } : {}),
    ...(cause !== undefined ? { cause } : {}),
  };
}

interface HttpDetails {
  readonly status?: number;
  readonly reason?: string;
  /** Replaces the error's own message when that message embeds the response. */
  readonly message?: string;
}

function httpDetails(err: ErrorLike): HttpDetails {
  // @kubernetes/client-node ApiException: numeric `code`, response `body` and `headers`.
  if (isHttpStatus(err.code) && 'headers' in err) {
    const status = kubernetesStatus(err.body);
    const reason = status.reason ?? apiExceptionSummary(err.message);
    return {
      status: err.code,
      ...(reason !== undefined ? { reason } : {}),
      message: status.message ?? `HTTP ${err.code}${reason !== undefined ? ` ${reason}` : ''}`,
    };
  }
  // isomorphic-git HttpError: `data: { statusCode, statusMessage, response }`.
  const data = err.data as { statusCode?: unknown; statusMessage?: unknown } | undefined;
  if (data !== null && typeof data === 'object' && isHttpStatus(data.statusCode)) {
    return { status: data.statusCode, ...stringField('reason', data.statusMessage) };
  }
  // Conventional `status` / `statusCode` fields (undici, got, node:http wrappers).
  const status = [err.status, err.statusCode].find(isHttpStatus);
  return status !== undefined ? { status, ...stringField('reason', err.statusText ?? err.reason) } : {};
}

/** A Kubernetes `Status` response body (an object, or its JSON text). */
function kubernetesStatus(body: unknown): { message?: string; reason?: string } {
  let parsed = body;
  if (typeof body === 'string' && body.trimStart().startsWith('{')) {
    try {
      parsed = JSON.parse(body);
    } catch {
      return {};
    }
  }
  if (parsed === null || typeof parsed !== 'object') return {};
  const status = parsed as { message?: unknown; reason?: unknown };
  return { ...stringField('message', status.message), ...stringField('reason', status.reason) };
}

/** The "Message: …" line of an ApiException, e.g. `Unauthorized`. */
function apiExceptionSummary(message: string): string | undefined {
  return /^Message: (.+)$/m.exec(message)?.[1];
}

/** Error subclasses that do not set `name` (ApiException) are named after their class. */
function errorName(err: Error): string {
  if (err.name && err.name !== 'Error') return err.name;
  return err.constructor?.name || 'Error';
}

/** The stack's first line repeats the original message: swap in the cleaned one. */
function rewriteStack(err: Error, message: string): string | undefined {
  if (typeof err.stack !== 'string') return undefined;
  const stack = err.message === '' ? err.stack : err.stack.replace(err.message, () => message);
  return scrubCredentials(stack);
}

function scrubCredentials(text: string): string {
  return text.replace(URL_CREDENTIALS, '$1[REDACTED]@');
}

function truncate(text: string): string {
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text;
}

function isHttpStatus(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 599;
}

function stringField<K extends string>(key: K, value: unknown): { [P in K]?: string } {
  return (typeof value === 'string' && value !== '' ? { [key]: value } : {}) as { [P in K]?: string };
}

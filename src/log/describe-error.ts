/**
 * How an error becomes text, everywhere: the CLI's last words (`janus: <message>`), the `err` and
 * `error` fields of every log record, and the results writer's retry lines all go through
 * describeError, so the same failure reads the same way in each.
 *
 * **Expected or not.** A failure that the person or the environment causes, and that a stack
 * trace would not help with, is *expected*: its description is its message, one line naming what
 * failed, and carries no stack (neither does any error it wraps). These are
 *
 * - errors that say so with the EXPECTED_ERROR property: KubeApiError (the API server refused or
 *   failed), KubeConnectionError (it could not be reached), KubeConfigError, GitAccessError
 *   (unless it wraps a programming error), the CLI's UsageError;
 * - Node's system errors (`code` and `syscall`, e.g. ECONNREFUSED on connect, ENOENT on open),
 *   network and TLS errors, and aborts;
 * - HTTP errors from client libraries (@kubernetes/client-node's ApiException, isomorphic-git's
 *   HttpError, `status`/`statusCode` fields), and `fetch failed` wrapping a network error.
 *
 * Anything else is a programming error and keeps its stack, and its causes' stacks.
 *
 * **What is kept.** HTTP client errors carry the whole response: the ApiException embeds the body
 * and every response header in its message, and isomorphic-git's HttpError keeps the response
 * body in `data`. Logging them as they are dumps kilobytes per line and can leak what a server
 * echoed back, so only an allowlist of fields is kept: name, message, expected, code, status,
 * reason, kind, stack and cause. Credentials in URLs are removed from messages and stacks.
 */
import { isNetworkCode } from './network-codes.ts';

/**
 * Set (true) on errors that are expected failures, and read by describeError. A getter may decide
 * per error (GitAccessError: expected unless it wraps a programming error). A registered symbol,
 * so modules that define errors need not agree on an import.
 */
export const EXPECTED_ERROR: unique symbol = Symbol.for('janus.expectedError');

export interface ErrorDescription {
  readonly name: string;
  /** What went wrong, naming the file, resource, server or repository involved. */
  readonly message: string;
  /** A failure the environment or the user caused: described by its message alone, without a stack. */
  readonly expected: boolean;
  /** A machine-readable code such as `ECONNREFUSED` or isomorphic-git's `HttpError`. */
  readonly code?: string | number;
  /** HTTP status code, when the error came from an HTTP response. */
  readonly status?: number;
  /** Kubernetes Status `reason` (e.g. `NotFound`, `Conflict`) or the HTTP status text. */
  readonly reason?: string;
  /** The error's own classification, e.g. GitAccessError's `auth` or `unreachable`. */
  readonly kind?: string;
  /** Only for unexpected errors. */
  readonly stack?: string;
  readonly cause?: ErrorDescription;
}

export interface DescribeOptions {
  /** Longer messages are cut here, with `…`; default 1000. The CLI shows them whole. */
  readonly maxMessageChars?: number;
}

type ErrorLike = Error & Record<string | symbol, unknown>;

const MAX_MESSAGE_CHARS = 1_000;
const MAX_CAUSE_DEPTH = 3;
/** `scheme://user:password@host`: credentials that must never reach a log line. */
const URL_CREDENTIALS = /(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi;

export function describeError(value: unknown, options: DescribeOptions = {}): ErrorDescription {
  const expected = isExpectedError(value);
  return describe(value, expected, options.maxMessageChars ?? MAX_MESSAGE_CHARS, 0);
}

/**
 * The text the CLI prints after `janus: `: the message of an expected error, whole; for anything
 * else its stack, and the stacks of what it wraps.
 */
export function errorText(value: unknown): string {
  const described = describeError(value, { maxMessageChars: Number.POSITIVE_INFINITY });
  if (described.expected) return described.message;
  const lines = [described.stack ?? described.message];
  for (let cause = described.cause; cause !== undefined; cause = cause.cause) {
    lines.push(`caused by: ${cause.stack ?? cause.message}`);
  }
  return lines.join('\n');
}

/** Whether `value` is an expected failure (see the top of this file). */
export function isExpectedError(value: unknown): boolean {
  return expectedAt(value, 0);
}

function expectedAt(value: unknown, depth: number): boolean {
  if (!(value instanceof Error) || depth > MAX_CAUSE_DEPTH) return false;
  const err = value as ErrorLike;
  const marked = err[EXPECTED_ERROR];
  if (typeof marked === 'boolean') return marked;
  if (err.name === 'AbortError' || err.code === 'ABORT_ERR') return true;
  if (typeof err.code === 'string' && (typeof err.syscall === 'string' || isNetworkCode(err.code)))
    return true;
  if (httpDetails(err).status !== undefined) return true;
  // fetch() wraps socket errors: TypeError('fetch failed', { cause: { code } }).
  return err instanceof TypeError && err.message === 'fetch failed' && expectedAt(err.cause, depth + 1);
}

function describe(value: unknown, expected: boolean, maxChars: number, depth: number): ErrorDescription {
  if (!(value instanceof Error)) {
    return { name: typeof value, message: truncate(scrubCredentials(String(value)), maxChars), expected };
  }
  const err = value as ErrorLike;
  const name = errorName(err);
  const http = httpDetails(err);
  const message = truncate(scrubCredentials(http.message ?? err.message), maxChars);
  const stack = expected ? undefined : rewriteStack(err, message);
  const code = err.code === http.status ? undefined : err.code;
  // Below an expected error nothing has a stack; below another, what is expected has none.
  const cause =
    err.cause !== undefined && depth < MAX_CAUSE_DEPTH
      ? describe(err.cause, expected || isExpectedError(err.cause), maxChars, depth + 1)
      : undefined;
  return {
    name,
    message,
    expected,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(http.status !== undefined ? { status: http.status } : {}),
    ...(http.reason !== undefined ? { reason: http.reason } : {}),
    ...stringField('kind', err.kind),
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
  // Conventional `status` / `statusCode` fields (KubeApiError, undici, node:http wrappers).
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

function truncate(text: string, maxChars: number): string {
  return text.length > maxChars ? `${text.slice(0, maxChars)}…` : text;
}

function isHttpStatus(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 599;
}

function stringField<K extends string>(key: K, value: unknown): { [P in K]?: string } {
  return (typeof value === 'string' && value !== '' ? { [key]: value } : {}) as { [P in K]?: string };
}

/**
 * One error type for everything that can go wrong talking to a repository, with a kind the
 * callers branch on (retry, report, give up) and a message that names the repository and ref.
 */
import { Errors } from 'isomorphic-git';
import { EXPECTED_ERROR, isExpectedError } from '../log/describe-error.ts';
import { isConnectionCode } from '../log/network-codes.ts';

export type GitErrorKind =
  /** Credentials missing, unreadable or refused (401/403). Retrying will not help until they change. */
  | 'auth'
  /** The repository or ref does not exist. */
  | 'not-found'
  /** Network failure, 5xx, or an overloaded server: retry later. */
  | 'unreachable'
  /** No response (or no progress) within the time limit: retry later. */
  | 'timeout'
  /** The server refused a push: someone else moved the branch. Fetch and replay. */
  | 'rejected'
  /** A URL scheme or server we cannot talk to. */
  | 'unsupported'
  /** One fetch would bring more than --max-fetch-bytes: refused; the next poll tries again. */
  | 'too-large'
  /** Anything else: a bug or a corrupt cache. */
  | 'internal';

export class GitAccessError extends Error {
  readonly kind: GitErrorKind;
  /** Repository URL or path, never with credentials. */
  readonly repository: string;
  readonly ref: string | undefined;

  constructor(
    kind: GitErrorKind,
    message: string,
    options: { repository: string; ref?: string; cause?: unknown },
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GitAccessError';
    this.kind = kind;
    this.repository = options.repository;
    this.ref = options.ref;
  }

  /**
   * Refused credentials, a missing repository, an unreachable server: reported in one line,
   * without a stack. An `internal` error is expected only when what it wraps is (an HTTP status
   * we do not map), not when it wraps a programming error.
   */
  get [EXPECTED_ERROR](): boolean {
    return this.kind !== 'internal' || isExpectedError(this.cause);
  }

  get retryable(): boolean {
    return this.kind === 'unreachable' || this.kind === 'timeout' || this.kind === 'rejected';
  }
}

/** Raised by our HTTP client when a request makes no progress for too long. */
export class HttpTimeoutError extends Error {
  readonly [EXPECTED_ERROR] = true;
  constructor(url: string, ms: number) {
    super(`no response from ${url} for ${Math.round(ms / 1000)}s`);
    this.name = 'HttpTimeoutError';
  }
}

/** Raised by limitDuration when one fetch takes longer than its deadline, however steady its bytes. */
export class FetchDeadlineError extends HttpTimeoutError {
  constructor(url: string, ms: number) {
    super(url, ms);
    this.message = `${url}: the fetch took longer than ${ms / 1000}s in all and was stopped (a server that sends its answer a few bytes at a time); it is tried again at the next poll`;
    this.name = 'FetchDeadlineError';
  }
}

/** Raised by limitResponseBytes when one fetch brings more than its limit. */
export class FetchTooLargeError extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(
      `the server sent more than ${formatBytes(limit)} (${limit} bytes) for one fetch, the limit set by --max-fetch-bytes (JANUS_MAX_FETCH_BYTES); the download was stopped`,
    );
    this.name = 'FetchTooLargeError';
    this.limit = limit;
  }
}

export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1 && value % 1024 === 0) {
    value /= 1024;
    unit++;
  }
  return `${value} ${units[unit]}`;
}

/** Maps whatever isomorphic-git, fetch or the file system threw to a GitAccessError. */
export function toGitAccessError(
  error: unknown,
  context: { repository: string; ref?: string; operation: string },
): GitAccessError {
  const { repository, ref, operation } = context;
  const subject = `${operation} ${repository}${ref ? ` (${ref})` : ''}`;
  if (error instanceof GitAccessError) {
    // Raised before the repository was known (e.g. reading credentials): add it now.
    if (error.repository !== '') return error;
    return new GitAccessError(error.kind, `${subject}: ${error.message}`, {
      repository,
      ...(ref && { ref }),
      cause: error,
    });
  }
  const make = (kind: GitErrorKind, detail: string) =>
    new GitAccessError(kind, `${subject}: ${detail}`, { repository, ...(ref && { ref }), cause: error });
  if (error instanceof HttpTimeoutError) return make('timeout', error.message);
  if (error instanceof FetchTooLargeError) return make('too-large', error.message);
  if (error instanceof Errors.HttpError) {
    const status = error.data.statusCode;
    if (status === 401 || status === 403) {
      return make(
        'auth',
        `the server refused the credentials (HTTP ${status}); check the configured token or password`,
      );
    }
    if (status === 404) return make('not-found', 'no such repository (HTTP 404)');
    return make(
      status >= 500 || status === 429 ? 'unreachable' : 'internal',
      `HTTP ${status} ${error.data.statusMessage}`,
    );
  }
  if (error instanceof Errors.UserCanceledError) return make('auth', 'authentication was refused');
  if (error instanceof Errors.PushRejectedError)
    return make('rejected', `push rejected (${error.data.reason})`);
  if (error instanceof Errors.GitPushError)
    return make('rejected', `push rejected by the server: ${error.message}`);
  if (error instanceof Errors.UnknownTransportError) {
    return make('unsupported', `unsupported URL; use https:// (${error.data.suggestion ?? 'no suggestion'})`);
  }
  if (error instanceof Errors.SmartHttpError)
    return make('unsupported', 'the server does not speak the smart HTTP protocol');
  if (error instanceof Errors.NotFoundError) return make('not-found', error.message);
  const code = networkCode(error);
  if (code) return make('unreachable', `network error ${code}`);
  return make('internal', error instanceof Error ? error.message : String(error));
}

/**
 * The code of a failed connection, at any depth: fetch() wraps socket errors as
 * TypeError('fetch failed', { cause: { code } }). A TLS failure is not one here: it stays
 * `internal`, with the TLS error's own words (e.g. "certificate has expired").
 */
function networkCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && isConnectionCode(code)) return code;
  }
  return error instanceof TypeError && error.message === 'fetch failed' ? 'fetch failed' : undefined;
}

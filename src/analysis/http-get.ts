/**
 * One bounded HTTP GET for the analysis checks: a timeout, a cap on the body, no redirects (a
 * redirect would carry the credentials elsewhere), and errors that name the address.
 */

import { isConnectionLostCode } from '../log/network-codes.ts';

/** A measurement's request gives up after this long when the check does not say. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;
/** A larger answer is refused: an instant query that returns one number is far smaller. */
export const MAX_RESPONSE_BYTES = 1024 * 1024;

export interface GetOptions {
  readonly headers?: Record<string, string> | undefined;
  readonly timeoutMs?: number | undefined;
  readonly maxBytes?: number | undefined;
  /** Aborts the request besides the timeout (the measurement was cancelled). */
  readonly signal?: AbortSignal | undefined;
}

export interface GetResult {
  readonly status: number;
  readonly body: string;
}

/** Thrown when the request could not be made or answered: names the address and what happened. */
export class AnalysisRequestError extends Error {
  override readonly name = 'AnalysisRequestError';
}

/** The URL without credentials or query, for messages. */
export function addressOf(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return JSON.stringify(url);
  }
}

export function checkUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new AnalysisRequestError(`${JSON.stringify(url)} is not a URL`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new AnalysisRequestError(`${JSON.stringify(url)}: only http and https addresses are queried`);
  }
  if (parsed.username || parsed.password) {
    throw new AnalysisRequestError(
      `${addressOf(url)}: put credentials in a Secret (credentials), not in the URL`,
    );
  }
  return parsed;
}

export async function boundedGet(url: string, opts: GetOptions = {}): Promise<GetResult> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? MAX_RESPONSE_BYTES;
  const where = addressOf(url);
  checkUrl(url);
  const signal = opts.signal
    ? AbortSignal.any([opts.signal, AbortSignal.timeout(timeoutMs)])
    : AbortSignal.timeout(timeoutMs);
  let res: Response | undefined;
  // One more try, within the same time budget, for a connection lost under the request: a
  // server closing an idle kept-alive connection just as it is reused (Prometheus behind a proxy,
  // any Node server after 5 s) would otherwise make an inconclusive measurement.
  for (let attempt = 1; !res; attempt++) {
    try {
      res = await fetch(url, { headers: opts.headers ?? {}, redirect: 'manual', signal });
    } catch (e) {
      if (attempt === 1 && !signal.aborted && connectionLost(e)) continue;
      throw new AnalysisRequestError(`${where}: ${requestFailure(e, timeoutMs)}`, { cause: e });
    }
  }
  try {
    return { status: res.status, body: await readBounded(res, maxBytes, where) };
  } catch (e) {
    if (e instanceof AnalysisRequestError) throw e;
    throw new AnalysisRequestError(`${where}: ${requestFailure(e, timeoutMs)}`, { cause: e });
  }
}

function connectionLost(e: unknown): boolean {
  const code = (e instanceof Error && e.cause instanceof Error ? e.cause : e) as
    | { code?: unknown }
    | undefined;
  return typeof code?.code === 'string' && isConnectionLostCode(code.code);
}

function requestFailure(e: unknown, timeoutMs: number): string {
  if (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError')) {
    return `no answer within ${timeoutMs / 1000}s`;
  }
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause : e;
  const code = (cause as { code?: unknown } | undefined)?.code;
  const text = cause instanceof Error ? cause.message : String(cause);
  return typeof code === 'string' && !text.includes(code) ? `${text} (${code})` : text;
}

async function readBounded(res: Response, maxBytes: number, where: string): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    await res.body?.cancel();
    throw new AnalysisRequestError(
      `${where}: answer of ${declared} bytes is over the ${maxBytes}-byte limit`,
    );
  }
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.byteLength;
    if (size > maxBytes) {
      await res.body.cancel().catch(() => {});
      throw new AnalysisRequestError(`${where}: answer over the ${maxBytes}-byte limit`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

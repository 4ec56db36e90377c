/**
 * The Prometheus query client: one instant query (GET /api/v1/query) that must return one
 * number. Errors name the address and what Prometheus said (a bad query is its 400 "bad_data").
 */
import {
  AnalysisRequestError,
  addressOf,
  boundedGet,
  DEFAULT_REQUEST_TIMEOUT_MS,
  type GetOptions,
} from './http-get.ts';

/** A number, or undefined when the query found no series. */
export type QueryValue = number | undefined;

interface ApiAnswer {
  status?: unknown;
  errorType?: unknown;
  error?: unknown;
  data?: { resultType?: unknown; result?: unknown };
}

/**
 * A check needs one number: Prometheus returns at most this many series of a query (its `limit`
 * parameter), enough to tell one from more, so the answer to a query matching a million series
 * is two series long.
 */
export const MAX_SERIES = 2;

/**
 * The URL an instant query GETs: the API path under the address (its own path kept). What the
 * address allow-list judges (policy.ts), so what is judged is what is requested.
 */
export function queryUrl(address: string, query: string, timeoutMs: number | undefined): string {
  const url = new URL('api/v1/query', address.endsWith('/') ? address : `${address}/`);
  url.searchParams.set('query', query);
  // Prometheus stops evaluating at this timeout too, so a heavy query does not run on unseen.
  url.searchParams.set('timeout', `${(timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS) / 1000}s`);
  url.searchParams.set('limit', String(MAX_SERIES));
  return url.toString();
}

export async function queryPrometheus(
  address: string,
  query: string,
  opts: GetOptions = {},
): Promise<QueryValue> {
  const url = queryUrl(address, query, opts.timeoutMs);
  const where = `Prometheus at ${addressOf(address)}`;
  const { status, body } = await boundedGet(url, opts).catch((e: unknown) => {
    throw e instanceof AnalysisRequestError
      ? new AnalysisRequestError(`${where}: ${e.message}`, { cause: e })
      : e;
  });
  if (status === 401 || status === 403) {
    throw new AnalysisRequestError(
      `${where} answered ${status}: it refused the check's credentials, or needs some (credentials.bearerToken or credentials.basicAuth)`,
    );
  }
  let answer: ApiAnswer;
  try {
    answer = JSON.parse(body) as ApiAnswer;
  } catch {
    throw new AnalysisRequestError(
      `${where} answered ${status} with no Prometheus API response (${snippet(body)})`,
    );
  }
  if (answer.status !== 'success') {
    const kind = typeof answer.errorType === 'string' ? answer.errorType : `HTTP ${status}`;
    const error = typeof answer.error === 'string' ? answer.error : snippet(body);
    throw new AnalysisRequestError(`${where} refused query ${JSON.stringify(query)}: ${kind}: ${error}`);
  }
  return oneNumber(answer.data, `${where}: query ${JSON.stringify(query)}`);
}

/** A scalar, or a vector of at most one series; anything else is the query's mistake. */
function oneNumber(data: ApiAnswer['data'], what: string): QueryValue {
  const type = data?.resultType;
  const result = data?.result;
  if (type === 'scalar') return sampleValue(result, what);
  if (type === 'vector' && Array.isArray(result)) {
    if (result.length === 0) return undefined;
    if (result.length > 1) {
      throw new AnalysisRequestError(
        `${what} returned more than one series; a check needs one number (aggregate it, e.g. with sum() or max())`,
      );
    }
    return sampleValue((result[0] as { value?: unknown }).value, what);
  }
  throw new AnalysisRequestError(`${what} returned a ${String(type)}; a check needs a scalar or one series`);
}

function sampleValue(sample: unknown, what: string): number {
  const text = Array.isArray(sample) ? sample[1] : undefined;
  if (typeof text !== 'string') throw new AnalysisRequestError(`${what} returned a sample without a value`);
  return INFINITIES[text] ?? Number(text); // Number() reads "NaN" but not Prometheus's "+Inf"
}

const INFINITIES: Record<string, number> = {
  '+Inf': Number.POSITIVE_INFINITY,
  '-Inf': Number.NEGATIVE_INFINITY,
};

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 200 ? `${flat.slice(0, 200)}…` : flat || 'empty body';
}

/**
 * Request headers as node:http gives them (`IncomingMessage.headers`): names in lower case,
 * values a string, or a list for headers that may repeat.
 */
export type WebhookHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/**
 * The single value of a header, or undefined when it is absent or repeated. A repeated
 * signature or token header is ambiguous, and ambiguity in authentication is a rejection.
 */
export function headerValue(headers: WebhookHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  return typeof value === 'string' ? value : undefined;
}

/** The value of the first of `names` present in the request. */
export function firstHeader(headers: WebhookHeaders, names: readonly string[]): string | undefined {
  for (const name of names) {
    const value = headerValue(headers, name);
    if (value !== undefined) return value;
  }
  return undefined;
}

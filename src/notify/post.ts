/**
 * One delivery request: POST with the provider's timeout, no redirects (a 3xx is a failure: a
 * receiver must not bounce the controller's request, and its signature, elsewhere), the answer
 * read only up to a few KiB. The address and key are read from their files now, as the Git
 * token is, so a rotated secret is used at the next delivery.
 */
import { readFile } from 'node:fs/promises';
import { checkAddress, type ProviderConfig } from './config.ts';
import { type Payload, SIGNATURE_HEADER, signature } from './payloads/index.ts';

/** What of a failed answer's body is kept for the log. */
const MAX_ERROR_BODY_CHARS = 512;

/** A delivery that failed; `retryable` false for an answer a retry cannot change (4xx but 408/429). */
export class DeliveryError extends Error {
  override readonly name = 'DeliveryError';
  readonly retryable: boolean;
  constructor(message: string, retryable: boolean) {
    super(message);
    this.retryable = retryable;
  }
}

export async function post(provider: ProviderConfig, payload: Payload): Promise<void> {
  const address = await addressOf(provider);
  const headers: Record<string, string> = { 'Content-Type': payload.contentType };
  if (provider.secretFile) {
    const key = (await readSecret(provider.secretFile, 'secretFile')).trim();
    headers[SIGNATURE_HEADER] = signature(payload.body, key);
  }
  let res: Response;
  try {
    res = await fetch(address, {
      method: 'POST',
      headers,
      body: payload.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(provider.timeoutMs),
    });
  } catch (e) {
    const timedOut = e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError');
    const why = timedOut ? `no answer within ${provider.timeoutMs} ms` : String((e as Error).cause ?? e);
    throw new DeliveryError(`${where(address)}: ${why}`, true);
  }
  if (res.status >= 200 && res.status < 300) {
    await res.body?.cancel();
    return;
  }
  const text = await startOf(res, MAX_ERROR_BODY_CHARS);
  const retryable = res.status >= 500 || res.status === 408 || res.status === 429;
  throw new DeliveryError(`${where(address)}: HTTP ${res.status}${text ? `: ${text}` : ''}`, retryable);
}

/** The first `max` characters of the answer, reading no more of it than that. */
async function startOf(res: Response, max: number): Promise<string> {
  const reader = res.body?.getReader();
  if (!reader) return '';
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.length < max) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // the answer broke off: what was read is enough for a log line
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return text.slice(0, max);
}

async function addressOf(provider: ProviderConfig): Promise<string> {
  const address = provider.address ?? (await readSecret(provider.addressFile ?? '', 'addressFile')).trim();
  try {
    checkAddress(address, provider.addressFile ?? 'address');
  } catch (e) {
    throw new DeliveryError((e as Error).message, false);
  }
  return address;
}

async function readSecret(file: string, field: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    throw new DeliveryError(`${field} ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`, true);
  }
}

/** The address without its path: Slack's and Teams' paths are the secret. */
function where(address: string): string {
  try {
    const url = new URL(address);
    return `${url.protocol}//${url.host}`;
  } catch {
    return 'the address';
  }
}

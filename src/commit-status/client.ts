/**
 * Sends ForgeRequests with the token, read afresh for each request from its Secret file (or
 * environment variable) as the Git token is, so a rotated token needs no restart. Every forge
 * takes `Authorization: Bearer <token>` (GitHub, Gitea/Forgejo, GitLab personal/project tokens).
 */
import { credentialsProvider, type SecretSource } from '../git/auth.ts';
import type { ForgeRequest } from './requests.ts';

/** One request may take this long; then it is an outage like any other, retried. */
export const REQUEST_TIMEOUT_MS = 15_000;

/** A forge answer's body is read up to this much (a status list of 100 entries is far less). */
const MAX_BODY_CHARS = 1024 * 1024;

export interface ForgeAnswer {
  status: number;
  headers: { get(name: string): string | null };
  text: string;
}

export type SendForgeRequest = (request: ForgeRequest, signal: AbortSignal) => Promise<ForgeAnswer>;

export function forgeSender(token: SecretSource, userAgent: string): SendForgeRequest {
  const credentials = credentialsProvider({ secret: token, scheme: 'bearer' });
  return async (request, signal) => {
    const auth = (await credentials()).headers();
    const response = await fetch(request.url, {
      method: request.method,
      headers: {
        ...auth,
        accept: 'application/json',
        'user-agent': userAgent,
        ...(request.body && { 'content-type': 'application/json' }),
      },
      ...(request.body && { body: JSON.stringify(request.body) }),
      redirect: 'error', // a redirect would carry the token nowhere useful
      signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
    });
    const text = (await response.text()).slice(0, MAX_BODY_CHARS);
    return { status: response.status, headers: response.headers, text };
  };
}

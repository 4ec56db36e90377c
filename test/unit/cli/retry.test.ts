import { describe, expect, it } from 'vitest';
import { isWorthRetrying } from '../../../src/cli/retry.ts';
import { KubeApiError, KubeConnectionError } from '../../../src/kube/errors.ts';

const network = (code: string) =>
  new KubeConnectionError(
    'https://127.0.0.1:6443',
    'dev',
    Object.assign(new Error(code), { code, syscall: 'connect' }),
  );

describe('what a one-shot command retries', () => {
  it('reports a server that is not there at once', () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH']) {
      expect(isWorthRetrying(network(code)), code).toBe(false);
    }
  });

  it('reports a server it does not trust at once', () => {
    for (const code of ['DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_HAS_EXPIRED', 'ERR_TLS_CERT_ALTNAME_INVALID']) {
      expect(isWorthRetrying(network(code)), code).toBe(false);
    }
  });

  it('retries what passes by itself: dropped connections, throttling, server trouble', () => {
    for (const code of ['ECONNRESET', 'ETIMEDOUT', 'EAI_AGAIN', 'EPIPE'])
      expect(isWorthRetrying(network(code)), code).toBe(true);
    for (const status of [429, 500, 503])
      expect(isWorthRetrying(apiError(status)), String(status)).toBe(true);
    for (const status of [400, 403, 404, 409, 422])
      expect(isWorthRetrying(apiError(status)), String(status)).toBe(false);
  });
});

function apiError(status: number): KubeApiError {
  return new KubeApiError('GET', '/api/v1/namespaces', status, undefined);
}

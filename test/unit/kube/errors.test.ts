/** Which API errors are worth a retry, and which are the request's fault. */
import { describe, expect, it } from 'vitest';
import { isMalformedApply, isTransient, KubeApiError, refusalOf } from '../../../src/kube/errors.ts';

const PATH = '/api/v1/namespaces/shop/configmaps/x';
const error = (status: number, message: string, reason?: string) =>
  new KubeApiError('PATCH', PATH, status, {
    kind: 'Status',
    code: status,
    message,
    ...(reason && { reason }),
  });

describe('isTransient', () => {
  it('retries throttling and server trouble', () => {
    expect(isTransient(error(429, 'slow down', 'TooManyRequests'))).toBe(true);
    expect(isTransient(error(500, 'etcdserver: leader changed', 'InternalError'))).toBe(true);
    expect(isTransient(error(503, 'unavailable', 'ServiceUnavailable'))).toBe(true);
    expect(isTransient(error(422, 'invalid', 'Invalid'))).toBe(false);
  });

  it('does not retry a server-side apply that does not fit the schema, which kube-apiserver answers 500', () => {
    // As kube-apiserver v1.36 answered an apply of a ConfigMap with data {a: 3}.
    const typed = error(
      500,
      'failed to create typed patch object (shop/x; /v1, Kind=ConfigMap): .data.a: expected string, got &value.valueUnstructured{Value:3}',
    );
    expect(isMalformedApply(typed)).toBe(true);
    expect(isTransient(typed)).toBe(false);
    expect(refusalOf(typed)?.message).toContain('.data.a: expected string');
  });
});

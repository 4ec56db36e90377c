import { ApiException } from '@kubernetes/client-node';
import { Errors } from 'isomorphic-git';
import { describe, expect, it } from 'vitest';
import { serializeError } from '../../../src/log/index.ts';

describe('serializeError', () => {
  it('maps a Kubernetes ApiException to its Status, without body or headers', () => {
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      message: 'configmaps "app-config" not found',
      reason: 'NotFound',
      details: { name: 'app-config', kind: 'configmaps' },
      code: 404,
    };
    const err = new ApiException(404, 'Not Found', status, { 'audit-id': 'audit-1234', 'set-cookie': 'c=1' });

    const serialized = serializeError(err);

    expect(serialized).toMatchObject({
      name: 'ApiException',
      message: 'configmaps "app-config" not found',
      status: 404,
      reason: 'NotFound',
    });
    expect(serialized).not.toHaveProperty('code');
    const json = JSON.stringify(serialized);
    expect(json).not.toContain('audit-1234');
    expect(json).not.toContain('set-cookie');
    expect(json).not.toContain('details');
    expect(serialized.stack).toMatch(/^Error: configmaps "app-config" not found\n\s+at /);
  });

  it('summarizes an ApiException without a Status body from its message line', () => {
    const err = new ApiException(401, 'Unauthorized', undefined, { 'www-authenticate': 'Bearer realm=x' });

    expect(serializeError(err)).toMatchObject({
      message: 'HTTP 401 Unauthorized',
      status: 401,
      reason: 'Unauthorized',
    });
    expect(JSON.stringify(serializeError(err))).not.toContain('realm');
  });

  it('reads a Status body that arrived as JSON text', () => {
    const err = new ApiException(
      409,
      'Conflict',
      '{"kind":"Status","message":"modified","reason":"Conflict"}',
      {},
    );

    expect(serializeError(err)).toMatchObject({ message: 'modified', status: 409, reason: 'Conflict' });
  });

  it('maps an isomorphic-git HttpError and drops the response it carries', () => {
    const err = new Errors.HttpError(
      403,
      'Forbidden',
      'remote: Permission denied to deploy-bot. token=ghp_leak',
    );

    const serialized = serializeError(err);

    expect(serialized).toMatchObject({
      name: 'HttpError',
      code: 'HttpError',
      status: 403,
      reason: 'Forbidden',
    });
    expect(JSON.stringify(serialized)).not.toContain('ghp_leak');
  });

  it('keeps code and cause of a network error', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:443'), {
      code: 'ECONNREFUSED',
      errno: -111,
      syscall: 'connect',
    });
    const err = new TypeError('fetch failed', { cause });

    const serialized = serializeError(err);

    expect(serialized).toMatchObject({
      name: 'TypeError',
      message: 'fetch failed',
      cause: { name: 'Error', code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:443' },
    });
    expect(serialized.cause).not.toHaveProperty('errno');
  });

  it('removes credentials from URLs in messages and stacks', () => {
    const err = new Error('clone of https://janus:ghp_secret@github.com/o/r.git failed');

    const serialized = serializeError(err);

    expect(serialized.message).toBe('clone of https://[REDACTED]@github.com/o/r.git failed');
    expect(serialized.stack).not.toContain('ghp_secret');
  });

  it('caps very long messages', () => {
    const serialized = serializeError(new Error('x'.repeat(10_000)));

    expect(serialized.message.length).toBeLessThanOrEqual(1_001);
  });

  it('stops following causes after a few levels', () => {
    const cyclic = new Error('loop');
    (cyclic as { cause?: unknown }).cause = cyclic;

    let depth = 0;
    for (let node = serializeError(cyclic).cause; node !== undefined; node = node.cause) depth++;

    expect(depth).toBe(3);
  });

  it('describes a thrown non-error value', () => {
    expect(serializeError('plain string')).toEqual({ name: 'string', message: 'plain string' });
  });
});

import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiException } from '@kubernetes/client-node';
import { Errors } from 'isomorphic-git';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/cli/command.ts';
import { GitAccessError, HttpTimeoutError, toGitAccessError } from '../../../src/git/errors.ts';
import { KubeApiError, KubeConnectionError } from '../../../src/kube/errors.ts';
import { KubeConfigError } from '../../../src/kube/kubeconfig.ts';
import { describeError, errorText, isExpectedError } from '../../../src/log/index.ts';

/** An error as node:net reports a refused connection. */
function connectionRefused(address = '127.0.0.1', port = 6443): Error {
  return Object.assign(new Error(`connect ECONNREFUSED ${address}:${port}`), {
    code: 'ECONNREFUSED',
    errno: -111,
    syscall: 'connect',
    address,
    port,
  });
}

/** What node:fs throws for a file that is not there. */
function missingFileError(): { path: string; error: unknown } {
  const path = join(tmpdir(), `janus-no-such-file-${process.pid}-${Date.now()}`);
  try {
    readFileSync(path);
  } catch (error) {
    return { path, error };
  }
  throw new Error(`${path} exists`);
}

/** No stack anywhere in the description, causes included. */
function stacks(description: object): number {
  return (JSON.stringify(description).match(/"stack":/g) ?? []).length;
}

describe('describeError: expected failures are one line, without a stack', () => {
  it('a refusal of the API server: its message, status and reason', () => {
    const err = new KubeApiError('GET', '/api/v1/namespaces/shop/configmaps/app', 403, {
      message: 'configmaps "app" is forbidden: User "alice" cannot get resource "configmaps"',
      reason: 'Forbidden',
    });

    expect(describeError(err)).toEqual({
      name: 'KubeApiError',
      message:
        'GET /api/v1/namespaces/shop/configmaps/app: 403 Forbidden: configmaps "app" is forbidden: User "alice" cannot get resource "configmaps"',
      expected: true,
      status: 403,
      reason: 'Forbidden',
    });
  });

  it('an API server that cannot be reached: names the server and the context', () => {
    const err = new KubeConnectionError('https://127.0.0.1:6443', 'kind-dev', connectionRefused());

    const described = describeError(err);

    expect(described).toMatchObject({
      name: 'KubeConnectionError',
      message:
        'cannot reach the API server https://127.0.0.1:6443 (context "kind-dev"): connect ECONNREFUSED',
      expected: true,
      code: 'ECONNREFUSED',
      cause: { message: 'connect ECONNREFUSED 127.0.0.1:6443', code: 'ECONNREFUSED', expected: true },
    });
    expect(stacks(described)).toBe(0);
    expect(errorText(err)).toBe(described.message);
  });

  it('a network error without a syscall, such as a reset connection', () => {
    const reset = new KubeConnectionError(
      'https://api.example:6443',
      'prod',
      Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
    );

    expect(describeError(reset).message).toBe(
      'cannot reach the API server https://api.example:6443 (context "prod"): socket hang up',
    );
    expect(isExpectedError(reset.cause)).toBe(true);
  });

  it('refused Git credentials: the repository, what to check, and the HTTP status of the cause', () => {
    const err = toGitAccessError(new Errors.HttpError(401, 'Unauthorized', 'remote: bad token ghp_leak'), {
      repository: 'https://git.example/acme/changes.git',
      ref: 'main',
      operation: 'fetch',
    });

    const described = describeError(err);

    expect(described).toMatchObject({
      name: 'GitAccessError',
      message:
        'fetch https://git.example/acme/changes.git (main): the server refused the credentials (HTTP 401); check the configured token or password',
      expected: true,
      kind: 'auth',
      cause: { name: 'HttpError', status: 401, reason: 'Unauthorized', expected: true },
    });
    expect(stacks(described)).toBe(0);
    expect(JSON.stringify(described)).not.toContain('ghp_leak');
  });

  it('a Git server that cannot be reached, and one that does not answer', () => {
    const unreachable = toGitAccessError(new TypeError('fetch failed', { cause: connectionRefused() }), {
      repository: 'https://git.example/acme/changes.git',
      operation: 'push',
    });
    expect(describeError(unreachable)).toMatchObject({
      message: 'push https://git.example/acme/changes.git: network error ECONNREFUSED',
      expected: true,
      kind: 'unreachable',
    });
    expect(stacks(describeError(unreachable))).toBe(0);

    const timeout = new HttpTimeoutError('https://git.example/acme/changes.git/info/refs', 30_000);
    expect(describeError(timeout)).toMatchObject({ expected: true });
    expect(describeError(timeout)).not.toHaveProperty('stack');
  });

  it('a kubeconfig that cannot be read', () => {
    const err = new KubeConfigError(
      "cannot read kubeconfig /home/me/.kube/nope: ENOENT: no such file or directory, open '/home/me/.kube/nope'",
    );

    expect(describeError(err)).toEqual({
      name: 'KubeConfigError',
      message:
        "cannot read kubeconfig /home/me/.kube/nope: ENOENT: no such file or directory, open '/home/me/.kube/nope'",
      expected: true,
    });
  });

  it('a missing file, as node:fs reports it: the path is in the message', () => {
    const { path, error } = missingFileError();

    expect(describeError(error)).toEqual({
      name: 'Error',
      message: `ENOENT: no such file or directory, open '${path}'`,
      expected: true,
      code: 'ENOENT',
    });
  });

  it('a usage error', () => {
    const err = new UsageError('--concurrency: expected a positive integer, got "0"');

    expect(describeError(err)).toEqual({
      name: 'UsageError',
      message: '--concurrency: expected a positive integer, got "0"',
      expected: true,
    });
    expect(errorText(err)).toBe('--concurrency: expected a positive integer, got "0"');
  });

  it('an abort', () => {
    const abort = new DOMException('This operation was aborted', 'AbortError');

    expect(describeError(abort)).toMatchObject({ name: 'AbortError', expected: true });
    expect(describeError(abort)).not.toHaveProperty('stack');
  });
});

describe('describeError: unexpected errors keep their stack', () => {
  it('a programming error', () => {
    let err: unknown;
    try {
      (undefined as unknown as { spec: string }).spec;
    } catch (e) {
      err = e;
    }

    const described = describeError(err);

    expect(described).toMatchObject({ name: 'TypeError', expected: false });
    expect(described.message).toMatch(/Cannot read properties of undefined/);
    expect(described.stack).toMatch(/^TypeError: Cannot read properties of undefined.*\n\s+at /);
    expect(errorText(err)).toBe(described.stack);
  });

  it('a GitAccessError that wraps a programming error, with the stack of what it wraps', () => {
    const bug = new RangeError('Invalid array length');
    const err = toGitAccessError(bug, { repository: '/srv/changes', operation: 'fetch' });

    const described = describeError(err);

    expect(err).toBeInstanceOf(GitAccessError);
    expect(described).toMatchObject({ name: 'GitAccessError', kind: 'internal', expected: false });
    expect(described.stack).toMatch(/\n\s+at /);
    expect(described.cause?.stack).toMatch(/^RangeError: Invalid array length\n\s+at /);
    expect(errorText(err)).toMatch(
      /^GitAccessError: fetch \/srv\/changes: Invalid array length\n\s+at [\s\S]*\ncaused by: RangeError: Invalid array length\n\s+at /,
    );
  });

  it('a thrown value that is not an error', () => {
    expect(describeError('plain string')).toEqual({
      name: 'string',
      message: 'plain string',
      expected: false,
    });
  });
});

describe('describeError: what is kept of HTTP client errors', () => {
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

    const described = describeError(err);

    expect(described).toEqual({
      name: 'ApiException',
      message: 'configmaps "app-config" not found',
      expected: true,
      status: 404,
      reason: 'NotFound',
    });
    const json = JSON.stringify(described);
    expect(json).not.toContain('audit-1234');
    expect(json).not.toContain('set-cookie');
    expect(json).not.toContain('details');
  });

  it('summarizes an ApiException without a Status body from its message line', () => {
    const err = new ApiException(401, 'Unauthorized', undefined, { 'www-authenticate': 'Bearer realm=x' });

    expect(describeError(err)).toMatchObject({
      message: 'HTTP 401 Unauthorized',
      status: 401,
      reason: 'Unauthorized',
    });
    expect(JSON.stringify(describeError(err))).not.toContain('realm');
  });

  it('reads a Status body that arrived as JSON text', () => {
    const err = new ApiException(
      409,
      'Conflict',
      '{"kind":"Status","message":"modified","reason":"Conflict"}',
      {},
    );

    expect(describeError(err)).toMatchObject({ message: 'modified', status: 409, reason: 'Conflict' });
  });

  it('maps an isomorphic-git HttpError and drops the response it carries', () => {
    const err = new Errors.HttpError(
      403,
      'Forbidden',
      'remote: Permission denied to deploy-bot. token=ghp_leak',
    );

    const described = describeError(err);

    expect(described).toMatchObject({
      name: 'HttpError',
      code: 'HttpError',
      status: 403,
      reason: 'Forbidden',
    });
    expect(JSON.stringify(described)).not.toContain('ghp_leak');
  });

  it('keeps code and cause of a network error', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:443'), {
      code: 'ECONNREFUSED',
      errno: -111,
      syscall: 'connect',
    });
    const err = new TypeError('fetch failed', { cause });

    const described = describeError(err);

    expect(described).toMatchObject({
      name: 'TypeError',
      message: 'fetch failed',
      expected: true,
      cause: { name: 'Error', code: 'ECONNREFUSED', message: 'connect ECONNREFUSED 127.0.0.1:443' },
    });
    expect(described.cause).not.toHaveProperty('errno');
    expect(stacks(described)).toBe(0);
  });

  it('removes credentials from URLs in messages and stacks', () => {
    const err = new Error('clone of https://janus:ghp_secret@github.com/o/r.git failed');

    const described = describeError(err);

    expect(described.message).toBe('clone of https://[REDACTED]@github.com/o/r.git failed');
    expect(described.stack).not.toContain('ghp_secret');
  });

  it('caps very long messages', () => {
    const described = describeError(new Error('x'.repeat(10_000)));

    expect(described.message.length).toBeLessThanOrEqual(1_001);
  });

  it('stops following causes after a few levels', () => {
    const cyclic = new Error('loop');
    (cyclic as { cause?: unknown }).cause = cyclic;

    let depth = 0;
    for (let node = describeError(cyclic).cause; node !== undefined; node = node.cause) depth++;

    expect(depth).toBe(3);
  });

  it('shows long messages whole when asked, as the CLI does', () => {
    const long = 'x'.repeat(5_000);

    expect(describeError(new UsageError(long), { maxMessageChars: Number.POSITIVE_INFINITY }).message).toBe(
      long,
    );
    expect(errorText(new UsageError(long))).toBe(long);
  });
});

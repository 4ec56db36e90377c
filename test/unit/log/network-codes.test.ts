/** One list of network error codes, and every reader of it agreeing on what a code means. */
import { describe, expect, it } from 'vitest';
import { toGitAccessError } from '../../../src/git/errors.ts';
import { isServerAbsent, KubeConnectionError } from '../../../src/kube/errors.ts';
import { isExpectedError } from '../../../src/log/describe-error.ts';
import {
  isConnectionCode,
  isNetworkCode,
  isServerAbsentCode,
  isTlsCode,
} from '../../../src/log/network-codes.ts';

const ABSENT = ['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH'];
const LOST = [
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
];
const TLS = [
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'ERR_SSL_WRONG_VERSION_NUMBER',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
];
const NOT_NETWORK = ['ENOENT', 'EACCES', 'EISDIR', 'ERR_INVALID_ARG_TYPE', 'HttpError'];

/** A socket error as Node reports it without a syscall (undici, TLS), or wrapped by fetch(). */
const coded = (code: string) => Object.assign(new Error(`failed: ${code}`), { code });
const fetchFailed = (code: string) => new TypeError('fetch failed', { cause: coded(code) });

describe('network codes', () => {
  it('sorts each code into one kind: nothing there, a lost connection, TLS, or not the network', () => {
    for (const code of ABSENT)
      expect([isConnectionCode(code), isServerAbsentCode(code)], code).toEqual([true, true]);
    for (const code of LOST)
      expect([isConnectionCode(code), isServerAbsentCode(code)], code).toEqual([true, false]);
    for (const code of TLS) expect([isTlsCode(code), isConnectionCode(code)], code).toEqual([true, false]);
    for (const code of [...ABSENT, ...LOST, ...TLS]) expect(isNetworkCode(code), code).toBe(true);
    for (const code of NOT_NETWORK) expect(isNetworkCode(code), code).toBe(false);
  });

  it('describeError: every network and TLS failure is expected, also without a syscall', () => {
    for (const code of [...ABSENT, ...LOST, ...TLS]) expect(isExpectedError(coded(code)), code).toBe(true);
    for (const code of NOT_NETWORK) expect(isExpectedError(coded(code)), code).toBe(false);
  });

  it('Git: every lost or refused connection is an unreachable server; TLS keeps its own words', () => {
    const context = { repository: 'https://git.example/acme/changes.git', operation: 'fetch' };
    for (const code of [...ABSENT, ...LOST]) {
      const error = toGitAccessError(fetchFailed(code), context);
      expect([error.kind, error.message], code).toEqual([
        'unreachable',
        `fetch https://git.example/acme/changes.git: network error ${code}`,
      ]);
    }
    const tls = toGitAccessError(coded('CERT_HAS_EXPIRED'), context);
    expect([tls.kind, tls.message]).toEqual([
      'internal',
      'fetch https://git.example/acme/changes.git: failed: CERT_HAS_EXPIRED',
    ]);
  });

  it('the CLI: a server not there or not trusted is absent; a lost connection is not', () => {
    const unreachable = (code: string) =>
      new KubeConnectionError('https://127.0.0.1:6443', 'dev', coded(code));
    for (const code of [...ABSENT, ...TLS]) expect(isServerAbsent(unreachable(code)), code).toBe(true);
    for (const code of LOST) expect(isServerAbsent(unreachable(code)), code).toBe(false);
  });
});

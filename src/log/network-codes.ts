/**
 * The one list of error codes that mean the network or TLS failed, as Node and undici report
 * them (often without a `syscall`). Each reader asks its own question of it: describeError
 * whether a failure is expected (no stack), Git whether a server is unreachable (retry later),
 * the CLI whether an API server is not there at all (report at once, as kubectl does) or only
 * dropped a connection (retry). Pure.
 */

/** Nothing answers at the address: no listener, no such host, no route. */
const SERVER_ABSENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** A connection that broke or stalled on the way, or a name lookup that failed for now. */
const CONNECTION_LOST_CODES: ReadonlySet<string> = new Set([
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
]);

/**
 * TLS: Node's own errors (`ERR_TLS_…`, `ERR_SSL_…`) and OpenSSL's certificate verification codes,
 * which name the certificate (CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT, …) but for one.
 */
const TLS_CODE = /CERT|^ERR_TLS_|^ERR_SSL_|^UNABLE_TO_VERIFY_LEAF_SIGNATURE$/;

/** The TLS handshake failed: the server is not one the client trusts, or does not speak TLS. */
export function isTlsCode(code: string): boolean {
  return TLS_CODE.test(code);
}

/** The network failed below TLS: nothing answered, or the connection broke. */
export function isConnectionCode(code: string): boolean {
  return SERVER_ABSENT_CODES.has(code) || CONNECTION_LOST_CODES.has(code);
}

/** A connection that broke on the way (reset, closed under the request), not one never made. */
export function isConnectionLostCode(code: string): boolean {
  return CONNECTION_LOST_CODES.has(code);
}

/** Any network or TLS failure. */
export function isNetworkCode(code: string): boolean {
  return isConnectionCode(code) || isTlsCode(code);
}

/**
 * No server there, or not the server the client trusts: unlike a dropped connection, waiting a
 * few seconds changes nothing.
 */
export function isServerAbsentCode(code: string): boolean {
  return SERVER_ABSENT_CODES.has(code) || isTlsCode(code);
}

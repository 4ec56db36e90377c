/**
 * Secret redaction for log records, applied to every record and every child binding.
 *
 * Rule: a value is replaced by `[REDACTED]` when its key, matched case-insensitively at any
 * depth (up to MAX_DEPTH), contains one of
 *   token, password, passwd, passphrase, secret, authorization, cookie, apikey / api-key / api_key,
 *   privatekey / private-key / private_key, credential
 * unless the key ends in File, Path, Ref or Name: those point at a secret (`gitTokenFile`,
 * `secretRef`, `secretName`) and keeping them readable is what makes a misconfiguration
 * debuggable. This covers `Authorization`, `Proxy-Authorization`, `X-Gitlab-Token`,
 * `accessToken`, `client_secret`, `webhookSecret`, `JANUS_GIT_TOKEN`, `Set-Cookie`, ….
 * Headers such as `Impersonate-User`, `X-Hub-Signature-256` are not secrets and stay.
 * Kubernetes Secret objects additionally lose `data`, `stringData` and the
 * `kubectl.kubernetes.io/last-applied-configuration` annotation (which repeats the data).
 *
 * Why not pino's `redact` option: it matches exact, case-sensitive paths at fixed depths.
 * Covering the spellings above at four depths took ~140 paths and made each log line ~40x
 * slower; a single walk that copies only the branches it changes costs a fraction of the
 * JSON serialization that follows. The input is never mutated.
 */

export const REDACTED = '[REDACTED]';

const SECRET_KEY =
  /token|passw(?:or)?d|passphrase|secret|authorization|cookie|api[-_]?key|private[-_]?key|credential/i;
const SECRET_POINTER_KEY = /(?:file|path|ref|name)$/i;
const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
/** Deeper values are logged as they are; log records are shallow and this bounds the walk. */
const MAX_DEPTH = 8;

type Fields = Record<string, unknown>;

/** Whether values under this key are censored. */
export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key) && !SECRET_POINTER_KEY.test(key);
}

/** Returns `fields` with secrets censored; the same reference when there was nothing to censor. */
export function redactSecrets(fields: Fields): Fields {
  return redactRecord(fields, 0);
}

function redactValue(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return redactArray(value, depth);
  return isDataRecord(value) ? redactRecord(value as Fields, depth) : value;
}

function redactArray(items: readonly unknown[], depth: number): readonly unknown[] {
  let copy: unknown[] | undefined;
  items.forEach((item, index) => {
    const redacted = redactValue(item, depth + 1);
    if (redacted !== item) {
      copy ??= [...items];
      copy[index] = redacted;
    }
  });
  return copy ?? items;
}

function redactRecord(record: Fields, depth: number): Fields {
  let copy: Fields | undefined;
  for (const [key, item] of Object.entries(record)) {
    const redacted = isSecretKey(key) && item != null ? REDACTED : redactValue(item, depth + 1);
    if (redacted !== item) {
      copy ??= { ...record };
      copy[key] = redacted;
    }
  }
  const result = copy ?? record;
  return isKubernetesSecret(result) ? redactSecretObject(result) : result;
}

/**
 * Plain objects and instances of simple data classes (the @kubernetes/client-node models) are
 * walked; errors (the error serializer owns them), values with toJSON (Date, Buffer) and
 * deeper class hierarchies (streams, sockets, requests) are left to their serializers.
 */
function isDataRecord(value: object): boolean {
  if (value instanceof Error || typeof (value as { toJSON?: unknown }).toJSON === 'function') return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) === Object.prototype;
}

function isKubernetesSecret(record: Fields): boolean {
  return record.kind === 'Secret' && typeof record.apiVersion === 'string';
}

function redactSecretObject(secret: Fields): Fields {
  const copy: Fields = { ...secret };
  for (const key of ['data', 'stringData']) {
    if (copy[key] != null) copy[key] = REDACTED;
  }
  const metadata = copy.metadata as { annotations?: Record<string, unknown> } | undefined;
  if (metadata?.annotations?.[LAST_APPLIED_ANNOTATION] !== undefined) {
    copy.metadata = {
      ...metadata,
      annotations: { ...metadata.annotations, [LAST_APPLIED_ANNOTATION]: REDACTED },
    };
  }
  return copy;
}

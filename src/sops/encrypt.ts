/**
 * A Kubernetes object encrypted as sops writes a YAML file (age recipients only): a fresh data
 * key, age-encrypted to each recipient; every value of the selected fields AES-256-GCM-encrypted
 * with its key path as additional data (sops's aes/cipher.go); the MAC over all values, encrypted
 * with the data key and the timestamp. What decrypt.ts (and `sops decrypt`) reads back. The
 * identity (apiVersion, kind, metadata) stays in clear: the target is read from it, and the
 * controller checks it again once decrypted (src/changes/sops-content.ts).
 */
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { Document, isScalar } from 'yaml';
import { escapeRegExp } from '../text/escape-regexp.ts';
import { goFloat, plainMacBytes } from './enc-value.ts';

/** The sops version whose format this writes. */
const SOPS_VERSION = '3.13.3';
const IV_BYTES = 32;
const CLEAR_FIELDS = new Set(['apiVersion', 'kind', 'metadata']);

/**
 * A data key and its age-encrypted copies, one per recipient: what the `sops.age` entries hold.
 * Made once for many objects (sealChanges: one per render), the X25519 wrapping is paid once per
 * recipient rather than once per recipient and object; every object sealed with it opens with the
 * same keys, as the values of one sops file do.
 */
export interface SealingKey {
  readonly dataKey: Buffer;
  readonly age: readonly { recipient: string; enc: string }[];
}

export async function sealingKey(recipients: readonly string[]): Promise<SealingKey> {
  const unique = [...new Set(recipients)];
  if (unique.length === 0) throw new Error('a sops file needs at least one age recipient');
  const dataKey = randomBytes(32);
  const { armor, Encrypter } = await import('age-encryption');
  const age = [];
  for (const recipient of unique) {
    const e = new Encrypter();
    e.addRecipient(recipient);
    age.push({ recipient, enc: armor.encode(await e.encrypt(dataKey)) });
  }
  return { dataKey, age };
}

/**
 * `object` as a sops-encrypted YAML document: every top-level field but apiVersion, kind and
 * metadata encrypted (sops's encrypted_regex names them), with `key` or a fresh key for
 * `recipients`. Undefined when it has no other field.
 */
export async function encryptObject(
  object: Record<string, unknown>,
  key: SealingKey | readonly string[],
  now: Date = new Date(),
): Promise<string | undefined> {
  const secretFields = Object.keys(object).filter((k) => !CLEAR_FIELDS.has(k));
  if (secretFields.length === 0) return undefined;
  const { dataKey, age } = 'dataKey' in key ? key : await sealingKey(key);
  const encryptedRegex = `^(${secretFields.map(escapeRegExp).join('|')})$`;
  const pattern = new RegExp(encryptedRegex, 'u');
  const hash = createHash('sha512');
  const walk = (value: unknown, path: string[]): unknown => {
    if (value === null || value === undefined) return null;
    if (Array.isArray(value)) return value.map((item) => walk(item, path));
    if (typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
        Object.defineProperty(out, key, {
          value: walk(child, [...path, key]),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    const bytes = plainMacBytes(value);
    if (bytes) hash.update(bytes);
    if (!path.some((k) => pattern.test(k))) return value;
    if (value === '') return ''; // sops leaves an empty string as it is
    return sealValue(value as string | number | boolean, dataKey, `${path.join(':')}:`);
  };
  const body = walk(object, []) as Record<string, unknown>;
  const lastModified = now.toISOString().replace(/\.\d+Z$/, 'Z');
  const mac = sealValue(hash.digest('hex').toUpperCase(), dataKey, lastModified);
  const sops = {
    age: age.map((a) => ({ ...a })),
    lastmodified: lastModified,
    mac,
    encrypted_regex: encryptedRegex,
    version: SOPS_VERSION,
  };
  // Never an alias for a repeated object: sops writes none, and a SOPS file with one is refused.
  const doc = new Document({ ...body, sops }, { aliasDuplicateObjects: false });
  // Quoted, as sops writes it: unquoted, YAML reads a timestamp, and sops refuses the file.
  const stamp = doc.getIn(['sops', 'lastmodified'], true);
  if (isScalar(stamp)) stamp.type = 'QUOTE_DOUBLE';
  return doc.toString({ lineWidth: 0 });
}

/** ENC[AES256_GCM,…] of one value, typed as sops types it. */
function sealValue(value: string | number | boolean, dataKey: Buffer, additionalData: string): string {
  let type: string;
  let text: string;
  if (typeof value === 'boolean') {
    type = 'bool';
    text = String(value);
  } else if (typeof value === 'number') {
    type = Number.isInteger(value) ? 'int' : 'float';
    text = goFloat(value);
  } else {
    type = 'str';
    text = value;
  }
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', dataKey, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(additionalData, 'utf8'));
  const data = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return `ENC[AES256_GCM,data:${data.toString('base64')},iv:${iv.toString('base64')},tag:${tag.toString('base64')},type:${type}]`;
}

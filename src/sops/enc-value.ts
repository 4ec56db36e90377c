/**
 * One value sops encrypted: `ENC[AES256_GCM,data:…,iv:…,tag:…,type:…]`, AES-256-GCM with the
 * value's key path as additional data (sops's aes/cipher.go), opened with node:crypto; and the
 * bytes each value adds to sops's MAC (sops.go's ToBytes).
 */
import { createDecipheriv } from 'node:crypto';

const BASE64 = '[A-Za-z0-9+/]*={0,2}';
const ENC = new RegExp(`^ENC\\[AES256_GCM,data:(${BASE64}),iv:(${BASE64}),tag:(${BASE64}),type:([a-z]+)\\]$`);

/** The types sops writes (time only for TOML-like stores, never from YAML or JSON). */
const TYPES = new Set(['str', 'int', 'float', 'bool', 'bytes', 'comment']);
const GCM_TAG_BYTES = 16;

export interface EncryptedValue {
  data: Buffer;
  iv: Buffer;
  tag: Buffer;
  type: string;
}

/** The parts of an ENC[…] value, or a reason it is not one sops could have written. */
export function parseEncryptedValue(text: string): EncryptedValue | string {
  const m = ENC.exec(text);
  if (!m) return 'is not a sops value (ENC[AES256_GCM,data:…,iv:…,tag:…,type:…])';
  const [, data = '', iv = '', tag = '', type = ''] = m;
  if (!TYPES.has(type)) return `has the value type "${type}", which Janus does not read`;
  const parts = {
    data: Buffer.from(data, 'base64'),
    iv: Buffer.from(iv, 'base64'),
    tag: Buffer.from(tag, 'base64'),
  };
  if (parts.iv.length === 0) return 'has an empty iv';
  if (parts.tag.length !== GCM_TAG_BYTES)
    return `has a ${parts.tag.length}-byte tag (AES-GCM's is ${GCM_TAG_BYTES})`;
  return { ...parts, type };
}

export interface OpenedValue {
  /** The value as sops would write it back: a string, number or boolean. */
  value: string | number | boolean;
  /** What it adds to the MAC; undefined for a comment, which the MAC leaves out. */
  macBytes: Buffer | undefined;
}

/** Decrypts `value` with the data key; throws (a reason) when it does not authenticate. */
export function openValue(value: EncryptedValue, dataKey: Buffer, additionalData: string): OpenedValue {
  const decipher = createDecipheriv('aes-256-gcm', dataKey, value.iv, { authTagLength: GCM_TAG_BYTES });
  decipher.setAAD(Buffer.from(additionalData, 'utf8'));
  decipher.setAuthTag(value.tag);
  let plain: Buffer;
  try {
    plain = Buffer.concat([decipher.update(value.data), decipher.final()]);
  } catch {
    throw new Error('does not decrypt: the value, its key path or the data key was changed');
  }
  return typed(value.type, plain);
}

function typed(type: string, plain: Buffer): OpenedValue {
  const text = plain.toString('utf8');
  switch (type) {
    case 'int': {
      // Go's strconv.Atoi: an optional sign and decimal digits.
      if (!/^[+-]?\d+$/.test(text)) throw new Error('is typed int but is not an integer');
      return { value: Number(text), macBytes: Buffer.from(BigInt(text).toString()) };
    }
    case 'float': {
      const n = Number(text);
      if (text.trim() === '' || Number.isNaN(n)) throw new Error('is typed float but is not a number');
      return { value: n, macBytes: Buffer.from(goFloat(n)) };
    }
    case 'bool': {
      const b = GO_BOOLS[text];
      if (b === undefined) throw new Error('is typed bool but is not a boolean');
      return { value: b, macBytes: Buffer.from(b ? 'True' : 'False') };
    }
    case 'comment':
      return { value: text, macBytes: undefined };
    default: // str, bytes
      return { value: text, macBytes: plain };
  }
}

/** Go's strconv.ParseBool. */
const GO_BOOLS: Record<string, boolean> = Object.assign(Object.create(null), {
  '1': true,
  t: true,
  T: true,
  TRUE: true,
  true: true,
  True: true,
  '0': false,
  f: false,
  F: false,
  FALSE: false,
  false: false,
  False: false,
});

/** The bytes sops's MAC takes for a value it left in clear; undefined for null (not hashed). */
export function plainMacBytes(value: unknown): Buffer | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'boolean') return Buffer.from(value ? 'True' : 'False');
  if (typeof value === 'number') return Buffer.from(goFloat(value));
  return Buffer.from(String(value), 'utf8');
}

/**
 * Go's strconv.FormatFloat(n, 'f', -1, 64), which is also strconv.Itoa for an integer: the
 * shortest digits that read back as `n`, never an exponent.
 */
export function goFloat(n: number): string {
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  const s = String(n);
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(s);
  if (!m) return s;
  const [, sign = '', lead = '', fraction = '', exponent = '0'] = m;
  const digits = lead + fraction;
  const point = 1 + Number(exponent);
  if (point >= digits.length) return sign + digits + '0'.repeat(point - digits.length);
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/**
 * The SSH wire encoding (RFC 4251 §5) that public keys and sshsig signatures are made of: a
 * reader of length-prefixed strings and mpints, and the public keys as node:crypto KeyObjects.
 * Everything read here comes from a commit anyone may push, so every length is checked.
 */
import { createPublicKey, type KeyObject } from 'node:crypto';

/** Input that is not what the SSH wire format says it must be. */
export class SshFormatError extends Error {
  override readonly name = 'SshFormatError';
}

export class WireReader {
  readonly #bytes: Buffer;
  #at = 0;

  constructor(bytes: Buffer) {
    this.#bytes = bytes;
  }

  get done(): boolean {
    return this.#at === this.#bytes.length;
  }

  raw(length: number): Buffer {
    if (length < 0 || this.#at + length > this.#bytes.length) throw new SshFormatError('truncated');
    const out = this.#bytes.subarray(this.#at, this.#at + length);
    this.#at += length;
    return out;
  }

  uint32(): number {
    return this.raw(4).readUInt32BE(0);
  }

  string(): Buffer {
    return this.raw(this.uint32());
  }

  text(): string {
    return this.string().toString('utf8');
  }
}

/** A length-prefixed string, as the signed data and key comparisons need it. */
export function wireString(value: Buffer | string): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length, 0);
  return Buffer.concat([length, bytes]);
}

/** The key types verified; anything else (DSA, certificates, security keys) is refused by name. */
export const SUPPORTED_KEY_TYPES = ['ssh-ed25519', 'ecdsa-sha2-nistp256', 'ssh-rsa'] as const;

export interface SshPublicKey {
  type: string;
  /** The key's wire blob: two keys are the same key when their blobs are equal. */
  blob: Buffer;
  /** Undefined for a type this module does not verify. */
  key: KeyObject | undefined;
}

/** Decodes a public key blob; a key of an unsupported type comes back without `key`. */
export function parsePublicKey(blob: Buffer): SshPublicKey {
  const reader = new WireReader(blob);
  const type = reader.text();
  return { type, blob, key: keyObject(type, reader) };
}

function keyObject(type: string, reader: WireReader): KeyObject | undefined {
  switch (type) {
    case 'ssh-ed25519': {
      const x = reader.string();
      if (x.length !== 32) throw new SshFormatError('an ed25519 key is 32 bytes');
      return createPublicKey({
        key: { kty: 'OKP', crv: 'Ed25519', x: x.toString('base64url') },
        format: 'jwk',
      });
    }
    case 'ecdsa-sha2-nistp256': {
      if (reader.text() !== 'nistp256') throw new SshFormatError('curve does not match the key type');
      const point = reader.string();
      if (point.length !== 65 || point[0] !== 4) throw new SshFormatError('not an uncompressed P-256 point');
      const x = point.subarray(1, 33).toString('base64url');
      const y = point.subarray(33).toString('base64url');
      return createPublicKey({ key: { kty: 'EC', crv: 'P-256', x, y }, format: 'jwk' });
    }
    case 'ssh-rsa': {
      const e = unsigned(reader.string());
      const n = unsigned(reader.string());
      if (n.length * 8 < 2048 - 8) throw new SshFormatError('RSA keys under 2048 bits are refused');
      return createPublicKey({
        key: { kty: 'RSA', n: n.toString('base64url'), e: e.toString('base64url') },
        format: 'jwk',
      });
    }
    default:
      return undefined;
  }
}

/** An mpint without the leading zero byte that keeps it positive. */
export function unsigned(mpint: Buffer): Buffer {
  let start = 0;
  while (start < mpint.length - 1 && mpint[start] === 0) start++;
  return mpint.subarray(start);
}

/** `type base64`, as an authorized_keys or allowed-signers line holds the key. */
export function publicKeyLine(key: SshPublicKey): string {
  return `${key.type} ${key.blob.toString('base64')}`;
}

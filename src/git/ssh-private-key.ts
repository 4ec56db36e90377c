/**
 * OpenSSH private keys (`-----BEGIN OPENSSH PRIVATE KEY-----`, PROTOCOL.key), the format
 * `ssh-keygen` writes by default, read into node:crypto KeyObjects: ed25519, ECDSA P-256 and RSA
 * (2048 bits or more). Only unencrypted keys: a key under a passphrase is refused by name, since
 * a controller has nobody to type it (the Secret that holds the key is its protection).
 */
import { createPrivateKey, type KeyObject, sign, verify } from 'node:crypto';
import { parsePublicKey, SshFormatError, type SshPublicKey, unsigned, WireReader } from './ssh-wire.ts';

const BEGIN = '-----BEGIN OPENSSH PRIVATE KEY-----';
const END = '-----END OPENSSH PRIVATE KEY-----';
const MAGIC = Buffer.from('openssh-key-v1\0', 'latin1');
/** Far more than any real key file (an RSA-16384 key is ~12 KiB): larger is refused unread. */
export const MAX_PRIVATE_KEY_CHARS = 64 * 1024;

export interface SshPrivateKey {
  /** The public half, as signatures carry it and allowed-signers files list it. */
  publicKey: SshPublicKey;
  privateKey: KeyObject;
  comment: string;
}

/** Decodes an OpenSSH private key; throws SshFormatError saying what is wrong (encrypted, another format). */
export function parseSshPrivateKey(text: string): SshPrivateKey {
  if (text.length > MAX_PRIVATE_KEY_CHARS) throw new SshFormatError('the key file is larger than 64 KiB');
  const armored = text.trim();
  if (!armored.startsWith(BEGIN) || !armored.endsWith(END)) {
    throw new SshFormatError(
      /-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(armored)
        ? 'not in OpenSSH format (-----BEGIN OPENSSH PRIVATE KEY-----): convert a copy with ssh-keygen -p -f <file>'
        : 'not an OpenSSH private key (-----BEGIN OPENSSH PRIVATE KEY-----)',
    );
  }
  const body = armored.slice(BEGIN.length, armored.length - END.length).replace(/\s+/g, '');
  const reader = new WireReader(Buffer.from(body, 'base64'));
  if (!reader.raw(MAGIC.length).equals(MAGIC)) throw new SshFormatError('missing openssh-key-v1 magic');
  const cipher = reader.text();
  const kdf = reader.text();
  reader.string(); // kdf options
  if (cipher !== 'none' || kdf !== 'none') {
    throw new SshFormatError(
      `the key is encrypted with a passphrase (${cipher}); Janus needs it unencrypted: remove the passphrase of a copy with ssh-keygen -p -N "" -f <copy>`,
    );
  }
  if (reader.uint32() !== 1) throw new SshFormatError('a key file holding several keys is not supported');
  const publicKey = parsePublicKey(reader.string());
  const secret = new WireReader(reader.string());
  const [check1, check2] = [secret.uint32(), secret.uint32()];
  if (check1 !== check2) throw new SshFormatError('corrupt key (check integers differ)');
  const type = secret.text();
  if (type !== publicKey.type)
    throw new SshFormatError(`the private key is ${type}, its public key ${publicKey.type}`);
  const privateKey = privateKeyObject(type, secret);
  const comment = secret.text();
  if (!publicKey.key || !matches(privateKey, publicKey.key))
    throw new SshFormatError('the private key does not match its public key');
  return { publicKey, privateKey, comment };
}

function privateKeyObject(type: string, reader: WireReader): KeyObject {
  const b64 = (bytes: Buffer) => bytes.toString('base64url');
  switch (type) {
    case 'ssh-ed25519': {
      const x = reader.string();
      const both = reader.string(); // seed ‖ public key
      if (x.length !== 32 || both.length !== 64) throw new SshFormatError('an ed25519 key is 32 bytes');
      return createPrivateKey({
        key: { kty: 'OKP', crv: 'Ed25519', x: b64(x), d: b64(both.subarray(0, 32)) },
        format: 'jwk',
      });
    }
    case 'ecdsa-sha2-nistp256': {
      if (reader.text() !== 'nistp256') throw new SshFormatError('curve does not match the key type');
      const point = reader.string();
      const d = fixed(unsigned(reader.string()), 32);
      if (point.length !== 65 || point[0] !== 4) throw new SshFormatError('not an uncompressed P-256 point');
      const [x, y] = [point.subarray(1, 33), point.subarray(33)];
      return createPrivateKey({
        key: { kty: 'EC', crv: 'P-256', x: b64(x), y: b64(y), d: b64(d) },
        format: 'jwk',
      });
    }
    case 'ssh-rsa': {
      const [n, e, d, iqmp, p, q] = Array.from({ length: 6 }, () => unsigned(reader.string()));
      const big = (bytes: Buffer | undefined) => BigInt(`0x${bytes?.toString('hex') || '0'}`);
      const exponent = (mod: bigint) => toBytes(big(d) % (mod - 1n));
      if (!n || !e || !d || !iqmp || !p || !q) throw new SshFormatError('truncated RSA key');
      return createPrivateKey({
        key: {
          kty: 'RSA',
          ...{ n: b64(n), e: b64(e), d: b64(d), p: b64(p), q: b64(q), qi: b64(iqmp) },
          ...{ dp: b64(exponent(big(p))), dq: b64(exponent(big(q))) },
        },
        format: 'jwk',
      });
    }
    default:
      throw new SshFormatError(`keys of type ${type} cannot sign results (ed25519, ECDSA P-256 or RSA)`);
  }
}

/** Whether the private key signs what the public key verifies: a corrupt or mixed-up file fails here, not in an auditor's hands. */
function matches(privateKey: KeyObject, publicKey: KeyObject): boolean {
  const probe = Buffer.from('janus: does the private key match its public key?');
  const digest = privateKey.asymmetricKeyType === 'ed25519' ? null : 'sha256';
  try {
    return verify(digest, probe, publicKey, sign(digest, probe, privateKey));
  } catch {
    return false;
  }
}

function fixed(bytes: Buffer, length: number): Buffer {
  if (bytes.length > length) throw new SshFormatError('integer too long');
  return Buffer.concat([Buffer.alloc(length - bytes.length), bytes]);
}

function toBytes(value: bigint): Buffer {
  const hex = value.toString(16);
  return Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
}

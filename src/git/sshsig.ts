/**
 * SSH signatures in OpenSSH's sshsig format (PROTOCOL.sshsig), the `-----BEGIN SSH SIGNATURE-----`
 * block git writes into a commit's gpgsig header with `gpg.format=ssh`: parsed and verified with
 * node:crypto, no ssh-keygen process. Verified: ssh-ed25519, ecdsa-sha2-nistp256, and RSA keys
 * with rsa-sha2-512 or rsa-sha2-256 (never the SHA-1 `ssh-rsa` signature, which ssh-keygen no
 * longer makes either).
 */
import { createHash, verify } from 'node:crypto';
import {
  parsePublicKey,
  SshFormatError,
  type SshPublicKey,
  unsigned,
  WireReader,
  wireString,
} from './ssh-wire.ts';

const MAGIC = Buffer.from('SSHSIG');
const BEGIN = '-----BEGIN SSH SIGNATURE-----';
const END = '-----END SSH SIGNATURE-----';
/** A signature block far larger than any real one (an RSA-16384 signature is ~5 KiB) is refused unread. */
const MAX_ARMORED_CHARS = 16 * 1024;

export interface SshSignature {
  publicKey: SshPublicKey;
  /** What the signer said the signature is for; git signs commits in namespace "git". */
  namespace: string;
  hashAlgorithm: string;
  /** The signature's algorithm name, e.g. ssh-ed25519 or rsa-sha2-512. */
  algorithm: string;
  signature: Buffer;
}

export function isSshSignature(armored: string): boolean {
  return armored.trimStart().startsWith(BEGIN);
}

/** Decodes an armored sshsig block; throws SshFormatError for anything malformed. */
export function parseSshSignature(armored: string): SshSignature {
  if (armored.length > MAX_ARMORED_CHARS) throw new SshFormatError('signature block too large');
  const text = armored.trim();
  if (!text.startsWith(BEGIN) || !text.endsWith(END)) throw new SshFormatError('not an SSH signature block');
  const body = text.slice(BEGIN.length, text.length - END.length).replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(body)) throw new SshFormatError('the signature is not base64');
  const reader = new WireReader(Buffer.from(body, 'base64'));
  if (!reader.raw(MAGIC.length).equals(MAGIC)) throw new SshFormatError('missing SSHSIG magic');
  const version = reader.uint32();
  if (version !== 1) throw new SshFormatError(`sshsig version ${version} is not supported`);
  const publicKey = parsePublicKey(reader.string());
  const namespace = reader.text();
  reader.string(); // reserved
  const hashAlgorithm = reader.text();
  const inner = new WireReader(reader.string());
  if (!reader.done) throw new SshFormatError('trailing bytes after the signature');
  const algorithm = inner.text();
  const signature = inner.string();
  return { publicKey, namespace, hashAlgorithm, algorithm, signature };
}

/** Whether `sig` is a valid signature of `message` by its own public key, in its own namespace. */
export function verifySshSignature(sig: SshSignature, message: Buffer): boolean {
  const key = sig.publicKey.key;
  if (key === undefined) return false;
  if (sig.hashAlgorithm !== 'sha512' && sig.hashAlgorithm !== 'sha256') return false;
  const signed = signedData(sig.namespace, sig.hashAlgorithm, message);
  try {
    switch (`${sig.publicKey.type} ${sig.algorithm}`) {
      case 'ssh-ed25519 ssh-ed25519':
        return verify(null, signed, key, sig.signature);
      case 'ecdsa-sha2-nistp256 ecdsa-sha2-nistp256':
        return verify('sha256', signed, { key, dsaEncoding: 'ieee-p1363' }, ecdsaSignature(sig.signature));
      case 'ssh-rsa rsa-sha2-512':
        return verify('sha512', signed, key, sig.signature);
      case 'ssh-rsa rsa-sha2-256':
        return verify('sha256', signed, key, sig.signature);
      default:
        return false;
    }
  } catch {
    // Whatever a pushed signature holds, it is a bad signature, never a failed poll.
    return false;
  }
}

/**
 * The bytes an sshsig signature is made over (PROTOCOL.sshsig): what a signer signs too, e.g.
 * results commits signed with `ssh-keygen -Y sign -n git`'s format from node:crypto.
 */
export function signedData(namespace: string, hashAlgorithm: 'sha512' | 'sha256', message: Buffer): Buffer {
  const digest = createHash(hashAlgorithm).update(message).digest();
  return Buffer.concat([
    MAGIC,
    wireString(namespace),
    wireString(''),
    wireString(hashAlgorithm),
    wireString(digest),
  ]);
}

/** SSH's ECDSA signature (mpint r, mpint s) as the fixed-width r‖s node:crypto reads. */
function ecdsaSignature(blob: Buffer): Buffer {
  const reader = new WireReader(blob);
  const r = unsigned(reader.string());
  const s = unsigned(reader.string());
  if (r.length > 32 || s.length > 32) throw new SshFormatError('ECDSA signature too long');
  const out = Buffer.alloc(64);
  r.copy(out, 32 - r.length);
  s.copy(out, 64 - s.length);
  return out;
}

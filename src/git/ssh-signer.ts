/**
 * Making sshsig signatures (PROTOCOL.sshsig) with node:crypto: byte for byte the armored block
 * `ssh-keygen -Y sign -n <namespace>` writes (SHA-512 message hash, 70-column base64), which
 * `git verify-commit`, `ssh-keygen -Y verify` and sshsig.ts all accept.
 */
import { sign } from 'node:crypto';
import type { SshPrivateKey } from './ssh-private-key.ts';
import { wireString } from './ssh-wire.ts';
import { signedData } from './sshsig.ts';

const MAGIC = Buffer.from('SSHSIG');
const VERSION = 1;
/** ssh-keygen's line width for the armored signature. */
const LINE = 70;

/** The armored `-----BEGIN SSH SIGNATURE-----` block of `message`, signed in `namespace`. */
export function signSsh(key: SshPrivateKey, namespace: string, message: Buffer): string {
  const data = signedData(namespace, 'sha512', message);
  const version = Buffer.alloc(4);
  version.writeUInt32BE(VERSION, 0);
  const blob = Buffer.concat([
    MAGIC,
    version,
    wireString(key.publicKey.blob),
    wireString(namespace),
    wireString(''),
    wireString('sha512'),
    wireString(signatureBlob(key, data)),
  ]);
  const base64 = blob.toString('base64');
  const lines = base64.match(new RegExp(`.{1,${LINE}}`, 'g')) ?? [];
  return ['-----BEGIN SSH SIGNATURE-----', ...lines, '-----END SSH SIGNATURE-----', ''].join('\n');
}

/** The signature as SSH encodes it: `string algorithm, string signature`. */
function signatureBlob(key: SshPrivateKey, data: Buffer): Buffer {
  switch (key.publicKey.type) {
    case 'ssh-ed25519':
      return Buffer.concat([wireString('ssh-ed25519'), wireString(sign(null, data, key.privateKey))]);
    case 'ecdsa-sha2-nistp256': {
      const rs = sign('sha256', data, { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
      const pair = Buffer.concat([wireString(mpint(rs.subarray(0, 32))), wireString(mpint(rs.subarray(32)))]);
      return Buffer.concat([wireString('ecdsa-sha2-nistp256'), wireString(pair)]);
    }
    case 'ssh-rsa':
      return Buffer.concat([wireString('rsa-sha2-512'), wireString(sign('sha512', data, key.privateKey))]);
    default:
      throw new Error(`keys of type ${key.publicKey.type} cannot sign`);
  }
}

/** An unsigned big-endian integer as an SSH mpint: no leading zeros, one added if the top bit is set. */
function mpint(bytes: Buffer): Buffer {
  let start = 0;
  while (start < bytes.length && bytes[start] === 0) start++;
  const trimmed = bytes.subarray(start);
  return trimmed.length > 0 && (trimmed[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.alloc(1), trimmed]) : trimmed;
}

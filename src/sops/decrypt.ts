/**
 * Decrypts a sops-encrypted document with age identities and verifies sops's MAC over all its
 * values, so that a value removed, added, reordered or changed in clear after encryption is
 * refused, as `sops decrypt` refuses it. The plaintext exists only in the returned value.
 */
import { createHash, type Hash, timingSafeEqual } from 'node:crypto';
import { unwrapDataKey } from './data-key.ts';
import { readSopsDocument, walkValues } from './document.ts';
import { type OpenedValue, openValue, parseEncryptedValue, plainMacBytes } from './enc-value.ts';
import type { SopsMetadata } from './metadata.ts';
import { SopsError } from './sops-error.ts';

/** sops.go's MACOnlyEncryptedInitialization: the MAC's first bytes under mac_only_encrypted. */
const MAC_ONLY_ENCRYPTED_INIT = Buffer.from([
  0x8a, 0x3f, 0xd2, 0xad, 0x54, 0xce, 0x66, 0x52, 0x7b, 0x10, 0x34, 0xf3, 0xd1, 0x47, 0xbe, 0x0b, 0x0b, 0x97,
  0x5b, 0x3b, 0xf4, 0x4f, 0x72, 0xc6, 0xfd, 0xad, 0xec, 0x81, 0x76, 0xf2, 0x7d, 0x69,
]);

/**
 * The document without its `sops:` block, every value in clear. `onSecret` sees each value that
 * was encrypted. Throws SopsError.
 */
export async function decryptSops(
  file: string,
  text: string,
  identities: readonly string[],
  onSecret?: (value: OpenedValue['value']) => void,
): Promise<Record<string, unknown>> {
  const d = readSopsDocument(file, text);
  const { metadata } = d;
  const dataKey = await unwrapDataKey(file, metadata.age, identities);
  const hash = macHash(metadata);
  const value = walkValues(d, (path, value) =>
    openLeaf(file, metadata, dataKey, hash, path, value, onSecret),
  );
  verifyMac(file, metadata.mac, metadata.lastModified, dataKey, hash.digest('hex').toUpperCase());
  return value;
}

/**
 * One value of a sops file as sops decrypts it: opened when the metadata says it is encrypted,
 * as it is otherwise; what it adds to the MAC goes into `hash`.
 */
export function openLeaf(
  file: string,
  metadata: SopsMetadata,
  dataKey: Buffer,
  hash: Hash,
  path: readonly string[],
  value: unknown,
  onSecret?: (value: OpenedValue['value']) => void,
): OpenedValue['value'] {
  const encrypted = metadata.isEncrypted(path);
  let opened: OpenedValue;
  if (!encrypted) {
    opened = { value: value as OpenedValue['value'], macBytes: plainMacBytes(value) };
  } else if (value === '') {
    opened = { value: '', macBytes: undefined }; // sops leaves an empty string as it is
  } else {
    if (typeof value !== 'string') throw new SopsError(file, 'should be encrypted but is in clear', path);
    const parts = parseEncryptedValue(value);
    if (typeof parts === 'string') throw new SopsError(file, parts, path);
    try {
      opened = openValue(parts, dataKey, `${path.join(':')}:`);
    } catch (e) {
      throw new SopsError(file, (e as Error).message, path);
    }
    onSecret?.(opened.value);
  }
  if (opened.macBytes && (encrypted || !metadata.macOnlyEncrypted)) hash.update(opened.macBytes);
  return opened.value;
}

/** The MAC hash a file's values go into (sops.go: SHA-512, primed under mac_only_encrypted). */
export function macHash(metadata: SopsMetadata): Hash {
  const hash = createHash('sha512');
  if (metadata.macOnlyEncrypted) hash.update(MAC_ONLY_ENCRYPTED_INIT);
  return hash;
}

/** Throws SopsError unless the file's stored MAC is the one its values give. */
export function verifyMac(
  file: string,
  mac: string,
  lastModified: string,
  dataKey: Buffer,
  computed: string,
): void {
  const parts = parseEncryptedValue(mac);
  if (typeof parts === 'string') throw new SopsError(file, `sops.mac ${parts}`);
  let stored: string;
  try {
    // sops passes lastmodified through Go's time.Format(RFC3339), which writes UTC as `Z`.
    stored = String(openValue(parts, dataKey, lastModified.replace(/\+00:00$/, 'Z')).value);
  } catch {
    throw new SopsError(file, 'its MAC does not decrypt: sops.mac or sops.lastmodified was changed');
  }
  const a = Buffer.from(stored);
  const b = Buffer.from(computed);
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    throw new SopsError(
      file,
      'its MAC does not match its values: the file was changed after sops encrypted it; refused',
    );
  }
}

/**
 * The data key of a sops file: 32 bytes, age-encrypted to each recipient in `sops.age`, opened
 * with the first identity that matches one of them. age by its author's TypeScript implementation
 * (npm age-encryption, FiloSottile/typage), the format's reference alongside the Go one sops uses.
 */
import type { AgeStanza } from './metadata.ts';
import { SopsError } from './sops-error.ts';

/** sops's data key is an AES-256 key. */
const DATA_KEY_BYTES = 32;

export async function unwrapDataKey(
  file: string,
  stanzas: readonly AgeStanza[],
  identities: readonly string[],
): Promise<Buffer> {
  const recipients = stanzas.map((s) => s.recipient).join(', ');
  if (identities.length === 0) {
    throw new SopsError(file, `no age key is available to decrypt it (it is encrypted for ${recipients})`);
  }
  // Loaded on first use: age-encryption and the @noble libraries it brings are ~10 MiB resident
  // and 3 MiB of heap, which every controller would carry whether or not a tenant uses sops.
  const { armor, Decrypter } = await import('age-encryption');
  const decrypter = new Decrypter();
  for (const identity of identities) decrypter.addIdentity(identity);
  for (const stanza of stanzas) {
    let wrapped: Uint8Array;
    try {
      wrapped = armor.decode(stanza.enc);
    } catch {
      throw new SopsError(
        file,
        `the data key for age recipient ${stanza.recipient} is not an armored age file`,
      );
    }
    let key: Uint8Array;
    try {
      key = await decrypter.decrypt(wrapped, 'uint8array');
    } catch {
      continue; // not one of our identities' recipients (or damaged): try the next stanza
    }
    if (key.length !== DATA_KEY_BYTES) {
      throw new SopsError(
        file,
        `the data key for age recipient ${stanza.recipient} is ${key.length} bytes, not ${DATA_KEY_BYTES}`,
      );
    }
    return Buffer.from(key);
  }
  throw new SopsError(file, `none of the age keys available decrypts it (it is encrypted for ${recipients})`);
}

/**
 * The identities in an age key file as age-keygen writes it (`# created:` and `# public key:`
 * comment lines, then `AGE-SECRET-KEY-1…`); several files may be concatenated. Blank lines and
 * comments are skipped.
 */
export function parseAgeKeys(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

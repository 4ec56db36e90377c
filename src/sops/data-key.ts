/**
 * The data key of a sops file: 32 bytes, age-encrypted to each recipient in `sops.age`, opened
 * from the entry for the first of our identities' recipients it lists. age by its author's TypeScript implementation
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
  // Only the entry sops wrote for one of our keys is opened, and only with that key: trying every
  // key on every entry would cost an X25519 operation per pair, for anyone who pushes a file.
  const keyOf = await recipientsOf(identities);
  const stanza = stanzas.find((s) => keyOf.has(s.recipient));
  const identity = stanza && keyOf.get(stanza.recipient);
  if (!stanza || !identity) {
    throw new SopsError(
      file,
      `none of the age keys available decrypts it (it is encrypted for ${recipients})`,
    );
  }
  let wrapped: Uint8Array;
  try {
    wrapped = armor.decode(stanza.enc);
  } catch {
    throw new SopsError(
      file,
      `the data key for age recipient ${stanza.recipient} is not an armored age file`,
    );
  }
  const decrypter = new Decrypter();
  decrypter.addIdentity(identity);
  let key: Uint8Array;
  try {
    key = await decrypter.decrypt(wrapped, 'uint8array');
  } catch {
    throw new SopsError(
      file,
      `the data key for age recipient ${stanza.recipient} does not open with that recipient's key (the file was changed after encryption)`,
    );
  }
  if (key.length !== DATA_KEY_BYTES) {
    throw new SopsError(
      file,
      `the data key for age recipient ${stanza.recipient} is ${key.length} bytes, not ${DATA_KEY_BYTES}`,
    );
  }
  return Buffer.from(key);
}

/**
 * The age recipient (public key) of each identity, mapped to it. An identity this library does not
 * read is left out: it could open nothing, and nothing can be encrypted to it.
 */
export async function recipientsOf(identities: readonly string[]): Promise<Map<string, string>> {
  // Loaded on first use (see unwrapDataKey).
  const { identityToRecipient } = await import('age-encryption');
  const keyOf = new Map<string, string>();
  for (const identity of identities) {
    try {
      keyOf.set(await identityToRecipient(identity), identity);
    } catch {
      // Not an age identity this library reads.
    }
  }
  return keyOf;
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

/**
 * A pushed sops file cannot make the controller try keys at will (src/sops/data-key.ts,
 * metadata.ts): each wrapped key costs an X25519 operation on the event loop every tenant shares.
 * At most MAX_AGE_RECIPIENTS entries of at most MAX_WRAPPED_KEY_CHARS each, and only the entry
 * for one of our keys is opened, with that key.
 */
import { armor, Encrypter, generateIdentity, identityToRecipient } from 'age-encryption';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { decryptSops } from '../../../src/sops/decrypt.ts';
import { encryptObject } from '../../../src/sops/encrypt.ts';
import { MAX_AGE_RECIPIENTS, MAX_WRAPPED_KEY_CHARS } from '../../../src/sops/metadata.ts';

const SECRET = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'db' },
  stringData: { password: 'hunter22' },
};

interface Key {
  identity: string;
  recipient: string;
}

const newKey = async (): Promise<Key> => {
  const identity = await generateIdentity();
  return { identity, recipient: await identityToRecipient(identity) };
};

/** A data key wrapped for each of `recipients` in one age file, armored: one entry's `enc`. */
async function wrappedFor(recipients: readonly string[]): Promise<string> {
  const e = new Encrypter();
  for (const r of recipients) e.addRecipient(r);
  return armor.encode(await e.encrypt(new Uint8Array(32)));
}

/** `text` (a sops file) with its `sops.age` list replaced by `entries`. */
function withAge(text: string, entries: readonly { recipient: string; enc: string }[]): string {
  const doc = parseDocument(text);
  // No aliases for the repeated entries: sops never writes one, and a sops file with one is refused.
  doc.setIn(['sops', 'age'], doc.createNode(entries, { aliasDuplicateObjects: false }));
  return doc.toString({ lineWidth: 0 });
}

let ours: Key;
let strangers: Key[];

beforeAll(async () => {
  ours = await newKey();
  strangers = await Promise.all(Array.from({ length: 8 }, newKey));
});

describe('the data key of a pushed sops file', () => {
  it('is opened from the entry for our key, wherever it is in the list', async () => {
    const file = await encryptObject(SECRET, [...strangers.map((s) => s.recipient), ours.recipient]);
    const opened = await decryptSops('db.yaml', file ?? '', [ours.identity]);
    expect(opened).toMatchObject({ stringData: { password: 'hunter22' } });
  });

  it(`refuses a list of more than ${MAX_AGE_RECIPIENTS} recipients before trying any`, async () => {
    const file = (await encryptObject(SECRET, [ours.recipient])) ?? '';
    const own = parseDocument(file).getIn(['sops', 'age', 0]) as unknown;
    const stranger = {
      recipient: strangers[0]?.recipient ?? '',
      enc: await wrappedFor([strangers[0]?.recipient ?? '']),
    };
    const crowded = withAge(file, [
      ...Array(MAX_AGE_RECIPIENTS).fill(stranger),
      (own as { toJSON(): never }).toJSON(),
    ]);
    await expect(decryptSops('db.yaml', crowded, [ours.identity])).rejects.toThrow(
      `db.yaml: sops.age lists ${MAX_AGE_RECIPIENTS + 1} recipients: at most ${MAX_AGE_RECIPIENTS} are read`,
    );
  });

  it(`refuses a wrapped key of more than ${MAX_WRAPPED_KEY_CHARS} characters (stanzas for many keys in one entry)`, async () => {
    const file = (await encryptObject(SECRET, [ours.recipient])) ?? '';
    const heavy = await wrappedFor([ours.recipient, ...strangers.map((s) => s.recipient)]);
    expect(heavy.length).toBeGreaterThan(MAX_WRAPPED_KEY_CHARS);
    await expect(
      decryptSops('db.yaml', withAge(file, [{ recipient: ours.recipient, enc: heavy }]), [ours.identity]),
    ).rejects.toThrow(
      /sops\.age\[0\]\.enc is \d+ characters: a data key wrapped for one recipient is at most 1024/,
    );
  });

  it('opens only the entry naming our key, with that key: a tampered one is refused, not skipped', async () => {
    const file = (await encryptObject(SECRET, [ours.recipient])) ?? '';
    const own = (parseDocument(file).toJSON() as { sops: { age: { recipient: string; enc: string }[] } }).sops
      .age[0];
    const tampered = { recipient: ours.recipient, enc: await wrappedFor([strangers[0]?.recipient ?? '']) };
    // The genuine entry after it would open the file if every entry were tried.
    await expect(
      decryptSops('db.yaml', withAge(file, [tampered, own ?? tampered]), [ours.identity]),
    ).rejects.toThrow(
      `the data key for age recipient ${ours.recipient} does not open with that recipient's key`,
    );
  });

  it('names the recipients when none is ours, trying none', async () => {
    const file = (await encryptObject(SECRET, [strangers[0]?.recipient ?? ''])) ?? '';
    await expect(decryptSops('db.yaml', file, [ours.identity])).rejects.toThrow(
      `db.yaml: none of the age keys available decrypts it (it is encrypted for ${strangers[0]?.recipient})`,
    );
  });
});

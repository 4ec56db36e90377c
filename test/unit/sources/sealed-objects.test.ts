/**
 * Which objects of a render that decrypted SOPS files are kept encrypted, and which would carry a
 * decrypted value in clear and so refuse the commit (src/sources/sealed-objects.ts).
 */
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { describe, expect, it } from 'vitest';
import type { Change, Transaction } from '../../../src/api/v1alpha1/index.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import type { DecryptedInput } from '../../../src/render/decrypt-inputs.ts';
import { decryptSopsFile } from '../../../src/sops/sops-file.ts';
import { identityKey, identityOf } from '../../../src/sources/inventory.ts';
import { inventoryFromTransaction } from '../../../src/sources/inventory-recovery.ts';
import { MIN_SOUGHT, sealChanges, sealedObjects } from '../../../src/sources/sealed-objects.ts';

const PASSWORD = 'correct-horse';
const decrypted: DecryptedInput[] = [
  {
    file: 'app/db.env',
    values: [PASSWORD, 'abc'],
    text: `PASSWORD=${PASSWORD}\nX=abc\n`,
    recipients: ['age1a'],
  },
  { file: 'app/other.yaml', values: [], text: 'k: v\n', recipients: ['age1b', 'age1a'] },
];

const obj = (kind: string, name: string, rest: Record<string, unknown> = {}, apiVersion = 'v1'): KubeObject =>
  ({ apiVersion, kind, metadata: { name, namespace: 'shop' }, ...rest }) as unknown as KubeObject;

describe('sealedObjects', () => {
  it('seals every Secret and the kinds --sops-kinds allows, to the namespace’s recipients, not the files’', () => {
    const secret = obj('Secret', 'db', { data: { PASSWORD: Buffer.from(PASSWORD).toString('base64') } });
    const db = obj('Database', 'main', { spec: { password: PASSWORD } }, 'db.example.com/v1');
    // app/other.yaml is also encrypted to age1b (its author, say): the namespace's keys are age1a and age1c.
    const check = sealedObjects(
      [secret, db, obj('ConfigMap', 'plain', { data: { x: 'abc' } })],
      decrypted,
      ['db.example.com/Database'],
      ['age1a', 'age1c', 'age1a'],
    );
    expect(check).toEqual({
      ok: true,
      sealed: {
        recipients: ['age1a', 'age1c'],
        objects: new Set([identityKey(identityOf(secret)), identityKey(identityOf(db))]),
      },
    });
  });

  it('refuses another kind that carries a decrypted value, as it is, base64-encoded, or the file whole', () => {
    const forms = [
      obj('ConfigMap', 'clear', { data: { p: `x${PASSWORD}y` } }),
      obj('ConfigMap', 'binary', { binaryData: { p: Buffer.from(PASSWORD).toString('base64') } }),
      obj('ConfigMap', 'file', { data: { env: `PASSWORD=${PASSWORD}\nX=abc\n` } }),
      obj('Deployment', 'web', { spec: { env: [{ value: PASSWORD }] } }, 'apps/v1'),
    ];
    for (const o of forms) {
      const check = sealedObjects([o], decrypted, [], ['age1a']);
      expect(check.ok).toBe(false);
      if (!check.ok)
        expect(check.refusals[0]?.message).toMatch(
          new RegExp(
            `^${o.apiVersion} ${o.kind} shop/${o.metadata.name} carries a value decrypted from app/db.env`,
          ),
        );
    }
  });

  it('refuses a Secret whose metadata carries a decrypted value: the metadata stays in clear', () => {
    const forms = [
      obj('Secret', PASSWORD),
      {
        ...obj('Secret', 'labelled'),
        metadata: { name: 'labelled', namespace: 'shop', labels: { p: PASSWORD } },
      },
      {
        ...obj('Secret', 'annotated'),
        metadata: {
          name: 'annotated',
          namespace: 'shop',
          annotations: { note: Buffer.from(PASSWORD).toString('base64') },
        },
      },
    ] as KubeObject[];
    for (const o of forms) {
      const check = sealedObjects([o], decrypted, [], ['age1a']);
      expect(check.ok).toBe(false);
      if (!check.ok)
        expect(check.refusals[0]?.message).toContain(
          `v1 Secret shop/${o.metadata.name} carries a value decrypted from app/db.env in its metadata`,
        );
    }
  });

  it(`does not look for values shorter than ${MIN_SOUGHT} characters, and seals nothing when nothing was decrypted`, () => {
    expect(sealedObjects([obj('ConfigMap', 'c', { data: { x: 'abc' } })], decrypted, [], ['age1a']).ok).toBe(
      true,
    );
    expect(sealedObjects([obj('Secret', 's')], [], [], [])).toEqual({ ok: true, sealed: undefined });
  });
});

describe('sealChanges', () => {
  it('encrypts every sealed object to each recipient, the data key wrapped once per recipient for the whole render', async () => {
    const identities = [await generateIdentity(), await generateIdentity()];
    const recipients = await Promise.all(identities.map((i) => identityToRecipient(i)));
    const secrets = Array.from({ length: 20 }, (_, i) =>
      obj('Secret', `s${i}`, { stringData: { password: `${PASSWORD}-${i}` } }),
    );
    const changes: Change[] = secrets.map((o) => ({
      type: 'Apply',
      target: { ...identityOf(o), namespace: 'shop' },
      content: o as unknown as Record<string, unknown>,
    }));
    const sealed = { recipients, objects: new Set(secrets.map((o) => identityKey(identityOf(o)))) };
    const out = await sealChanges(changes, sealed);
    const stanzas = new Set<string>();
    for (const [i, change] of out.entries()) {
      expect(change.content).toBeUndefined();
      const text = change.sopsContent ?? '';
      // Each opens with either key alone.
      for (const identity of identities) {
        const opened = await decryptSopsFile(`s${i}.yaml`, text, [identity]);
        expect(opened.values).toContain(`${PASSWORD}-${i}`);
      }
      for (const m of text.matchAll(
        /-----BEGIN AGE ENCRYPTED FILE-----[^-]+-----END AGE ENCRYPTED FILE-----/g,
      ))
        stanzas.add(m[0]);
    }
    // One wrapped data key per recipient, whatever the number of objects.
    expect(stanzas.size).toBe(recipients.length);
  });
});

describe('inventoryFromTransaction', () => {
  it('keeps an object applied encrypted, with a digest no render has', () => {
    const txn = {
      metadata: { name: 't', namespace: 'shop' },
      spec: {
        serviceAccountName: 'sa',
        changes: [
          {
            type: 'Apply',
            target: { apiVersion: 'v1', kind: 'Secret', namespace: 'shop', name: 'db' },
            sopsContent: 'encrypted',
          },
        ],
      },
    } as unknown as Transaction;
    expect(inventoryFromTransaction([], txn, 'key')).toEqual([
      { apiVersion: 'v1', kind: 'Secret', namespace: 'shop', name: 'db', digest: '0'.repeat(64) },
    ]);
  });
});

/**
 * Which objects of a render that decrypted SOPS files are kept encrypted, and which would carry a
 * decrypted value in clear and so refuse the commit (src/sources/sealed-objects.ts).
 */
import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import type { DecryptedInput } from '../../../src/render/decrypt-inputs.ts';
import { identityKey, identityOf } from '../../../src/sources/inventory.ts';
import { inventoryFromTransaction } from '../../../src/sources/inventory-recovery.ts';
import { MIN_SOUGHT, sealedObjects } from '../../../src/sources/sealed-objects.ts';

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
  it('seals every Secret and the kinds --sops-kinds allows, with the files’ recipients', () => {
    const secret = obj('Secret', 'db', { data: { PASSWORD: Buffer.from(PASSWORD).toString('base64') } });
    const db = obj('Database', 'main', { spec: { password: PASSWORD } }, 'db.example.com/v1');
    const check = sealedObjects([secret, db, obj('ConfigMap', 'plain', { data: { x: 'abc' } })], decrypted, [
      'db.example.com/Database',
    ]);
    expect(check).toEqual({
      ok: true,
      sealed: {
        recipients: ['age1a', 'age1b'],
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
      const check = sealedObjects([o], decrypted, []);
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
      const check = sealedObjects([o], decrypted, []);
      expect(check.ok).toBe(false);
      if (!check.ok)
        expect(check.refusals[0]?.message).toContain(
          `v1 Secret shop/${o.metadata.name} carries a value decrypted from app/db.env in its metadata`,
        );
    }
  });

  it(`does not look for values shorter than ${MIN_SOUGHT} characters, and seals nothing when nothing was decrypted`, () => {
    expect(sealedObjects([obj('ConfigMap', 'c', { data: { x: 'abc' } })], decrypted, []).ok).toBe(true);
    expect(sealedObjects([obj('Secret', 's')], [], [])).toEqual({ ok: true, sealed: undefined });
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

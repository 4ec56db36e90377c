/**
 * decryptedItem: an encrypted change becomes, for one request, the same change in clear; a
 * Transaction created by hand whose encrypted manifest names another object than its target is
 * refused (the poller reads the target from the same fields, but the API accepts any spec).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Change, Transaction } from '../../../src/api/v1alpha1/index.ts';
import type { ChangeContext, ChangeItem } from '../../../src/changes/change-context.ts';
import { decryptedItem, isDecryptionRefusal } from '../../../src/changes/sops-content.ts';
import type { Objects } from '../../../src/kube/resources.ts';
import { type AgeKey, newAgeKey, sopsBinaries, sopsEncrypt } from '../../support/servers/sops.ts';

const SECRET = 'apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\nstringData:\n  password: s3cret\n';

let team: AgeKey;
beforeAll(async () => {
  sopsBinaries();
  team = await newAgeKey();
}, 600_000);

const txn = { metadata: { name: 't', namespace: 'shop' }, spec: { changes: [] } } as unknown as Transaction;
/** With its identities given, decryptedItem reads no Secret: the client is never used. */
const ctx = (): ChangeContext => ({
  txn,
  objects: undefined as unknown as Objects,
  ageIdentities: [team.identity],
});

function item(name: string, sopsContent: string): ChangeItem {
  const change: Change = { target: { apiVersion: 'v1', kind: 'Secret', name }, type: 'Update', sopsContent };
  return {
    index: 0,
    change,
    target: { apiVersion: 'v1', group: '', kind: 'Secret', name, namespace: 'shop' },
  };
}

const encrypt = () =>
  sopsEncrypt(SECRET, { recipients: [team.recipient], flags: ['--encrypted-regex', '^(data|stringData)$'] });

describe('decryptedItem', () => {
  it('gives the change its content in clear and no sopsContent', async () => {
    const plain = await decryptedItem(ctx(), item('creds', encrypt()));
    expect(plain.change).toEqual({
      target: { apiVersion: 'v1', kind: 'Secret', name: 'creds' },
      type: 'Update',
      content: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'creds' },
        stringData: { password: 's3cret' },
      },
    });
  });

  it('refuses a manifest that names another object than the target', async () => {
    const e = await decryptedItem(ctx(), item('other', encrypt())).catch((error: unknown) => error);
    expect(isDecryptionRefusal(e)).toBe(true);
    expect(String(e)).toContain('metadata.name does not name the change');
    expect(String(e)).not.toContain('s3cret');
  });
});

/**
 * Adoption: a Transaction found under a directory's name is taken for the one Janus created only
 * when it names the same directory and carries a stamp made with the cursor's key, so a namesake
 * a tenant pre-created with the same annotations (where the admission policy is not installed) is
 * a clash, not an adoption.
 */
import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import { adoption, hasValidStamp, newStampKey, withStamp } from '../../../src/gitops/provenance.ts';
import { aTransaction, sourceAnnotations } from '../../support/transactions.ts';

const REPOSITORY = 'https://git.example.com/platform/deploys.git';

function fromDirectory(annotations: Record<string, string> = {}): Transaction {
  return aTransaction({
    name: 's11-release',
    namespace: 'team-a',
    uid: 'u-1',
    annotations: {
      ...sourceAnnotations({
        repository: REPOSITORY,
        revision: `main@sha1:${'a'.repeat(40)}`,
        path: 'transactions/s11-release',
        sequence: '17',
      }),
      ...annotations,
    },
  });
}

describe('the provenance stamp', () => {
  it('holds for the Transaction it was made for, under its key only', () => {
    const key = newStampKey();
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const stamped = withStamp(fromDirectory(), key);
    expect(hasValidStamp(stamped, key)).toBe(true);
    expect(hasValidStamp(stamped, newStampKey())).toBe(false);
    expect(hasValidStamp(fromDirectory(), key)).toBe(false);
  });

  it('breaks when the name, the namespace or a source annotation differs (a copied stamp)', () => {
    const key = newStampKey();
    const stamp = withStamp(fromDirectory(), key).metadata.annotations?.['tx.janus.io/source-stamp'] ?? '';
    const copied = (more: Record<string, string>) =>
      fromDirectory({ 'tx.janus.io/source-stamp': stamp, ...more });
    expect(hasValidStamp(copied({}), key)).toBe(true);
    expect(hasValidStamp(copied({ 'tx.janus.io/source-sequence': '0' }), key)).toBe(false);
    expect(hasValidStamp(copied({ 'tx.janus.io/source-path': 'transactions/other' }), key)).toBe(false);
    const renamed = copied({});
    renamed.metadata.name = 's12-release';
    expect(hasValidStamp(renamed, key)).toBe(false);
    const moved = copied({});
    moved.metadata.namespace = 'team-b';
    expect(hasValidStamp(moved, key)).toBe(false);
  });
});

describe('adoption of a Transaction found under the name of a directory not yet recorded', () => {
  const key = newStampKey();
  const wanted = withStamp(fromDirectory({ 'tx.janus.io/source-sequence': '18' }), key);

  it('adopts the one Janus created (a restart lost the record), whatever sequence it got then', () => {
    expect(adoption(wanted, withStamp(fromDirectory(), key), key)).toEqual({ adopt: true });
  });

  it('refuses a namesake with the same source annotations that Janus did not stamp, naming its uid', () => {
    const forged = fromDirectory();
    forged.metadata.uid = 'u-tenant';
    expect(adoption(wanted, forged, key)).toEqual({
      adopt: false,
      message:
        'a Transaction team-a/s11-release (uid u-tenant) already exists and it names this directory as its source ' +
        'but Janus did not create it (no valid tx.janus.io/source-stamp); rename the directory',
    });
    expect(adoption(wanted, withStamp(fromDirectory(), newStampKey()), key).adopt).toBe(false);
  });

  it("refuses another directory's Transaction and one from no directory at all", () => {
    const other = withStamp(fromDirectory({ 'tx.janus.io/source-path': 'transactions/elsewhere' }), key);
    expect(adoption(wanted, other, key)).toMatchObject({
      adopt: false,
      message: expect.stringContaining(`it was created from transactions/elsewhere in ${REPOSITORY}`),
    });
    const plain = { ...fromDirectory(), metadata: { name: 's11-release', namespace: 'team-a', uid: 'u-2' } };
    expect(adoption(wanted, plain, key)).toMatchObject({
      adopt: false,
      message: expect.stringContaining(
        '(uid u-2) already exists and it was not created from this repository',
      ),
    });
  });
});

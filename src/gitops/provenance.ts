/**
 * Whether a Transaction found under a directory's name is the one Janus created from it. The
 * source annotations say so, and only the controller may write them where the admission policy
 * janus-transaction-provenance is installed; the stamp says so where it is not: an HMAC of the
 * Transaction's name and source annotations under a key kept in the Git cursor (a ConfigMap in
 * the controller's namespace), which no tenant can compute. Pure, but for the key's randomness.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  ANNOTATION_SOURCE_PATH,
  ANNOTATION_SOURCE_REPOSITORY,
  ANNOTATION_SOURCE_REVISION,
  ANNOTATION_SOURCE_SEQUENCE,
  ANNOTATION_SOURCE_STAMP,
  type Transaction,
} from '../api/v1alpha1/index.ts';

const STAMPED = [
  ANNOTATION_SOURCE_REPOSITORY,
  ANNOTATION_SOURCE_REVISION,
  ANNOTATION_SOURCE_PATH,
  ANNOTATION_SOURCE_SEQUENCE,
];

/** A key for stamps: 256 random bits, base64url. */
export function newStampKey(): string {
  return randomBytes(32).toString('base64url');
}

/** The stamp of a Transaction's name and source annotations under `key`. */
export function provenanceStamp(key: string, txn: Pick<Transaction, 'metadata'>): string {
  const annotations = txn.metadata.annotations ?? {};
  const fields = [
    txn.metadata.namespace ?? '',
    txn.metadata.name,
    ...STAMPED.map((k) => annotations[k] ?? ''),
  ];
  return createHmac('sha256', key).update(JSON.stringify(fields)).digest('base64url');
}

/** The Transaction with its stamp, as the materializer creates it. */
export function withStamp(txn: Transaction, key: string): Transaction {
  const annotations = { ...txn.metadata.annotations, [ANNOTATION_SOURCE_STAMP]: provenanceStamp(key, txn) };
  return { ...txn, metadata: { ...txn.metadata, annotations } };
}

export function hasValidStamp(txn: Pick<Transaction, 'metadata'>, key: string): boolean {
  const stamp = Buffer.from(txn.metadata.annotations?.[ANNOTATION_SOURCE_STAMP] ?? '');
  const expected = Buffer.from(provenanceStamp(key, txn));
  return stamp.length === expected.length && timingSafeEqual(stamp, expected);
}

export type Adoption = { adopt: true } | { adopt: false; message: string };

/**
 * A create found `existing` under the name of `wanted` (a directory not yet recorded on the
 * results branch): it is adopted only when it came from the same directory of the same repository
 * and carries a stamp made with `key`; anything else is a clash the directory is rejected for.
 */
export function adoption(wanted: Transaction, existing: Transaction, key: string): Adoption {
  const { namespace = '', name } = wanted.metadata;
  const want = wanted.metadata.annotations ?? {};
  const have = existing.metadata.annotations ?? {};
  const same = [ANNOTATION_SOURCE_REPOSITORY, ANNOTATION_SOURCE_PATH].every((k) => want[k] === have[k]);
  if (same && hasValidStamp(existing, key)) return { adopt: true };
  const origin = !have[ANNOTATION_SOURCE_PATH]
    ? 'it was not created from this repository'
    : !same
      ? `it was created from ${have[ANNOTATION_SOURCE_PATH]} in ${have[ANNOTATION_SOURCE_REPOSITORY] ?? 'another repository'}`
      : 'it names this directory as its source but Janus did not create it (no valid tx.janus.io/source-stamp)';
  return {
    adopt: false,
    message: `a Transaction ${namespace}/${name} (uid ${existing.metadata.uid ?? 'unknown'}) already exists and ${origin}; rename the directory`,
  };
}

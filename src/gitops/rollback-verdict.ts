/**
 * Whether a ROLLBACK file may request the rollback of the Transaction now in the cluster under
 * its directory's name. Pure: the cluster side reads the Transaction and carries the verdict out.
 *
 * Only the Transaction this repository and path created is ever acted on: the uid the results
 * branch recorded when it was created, and the provenance the controller wrote on it (only the
 * controller may write tx.janus.io/source-*: manifests/policy/transaction-provenance.yaml). A
 * namesake created since (retention freed the name), one a tenant created, or one a forged
 * record points at is left alone, with a notice saying why.
 */
import { acceptance, leavesWork, phaseOf } from '../api/requests.ts';
import {
  ANNOTATION_REQUEST_ROLLBACK,
  ANNOTATION_SOURCE_PATH,
  ANNOTATION_SOURCE_REPOSITORY,
  type Transaction,
} from '../api/v1alpha1/index.ts';
import type { RollbackRefusal } from './materialize-records.ts';

/** What created the Transaction a ROLLBACK file is about, as the results branch and Git say. */
export interface RollbackOrigin {
  /** The uid the results branch recorded for the directory. */
  uid: string;
  /** The repository as the materializer records it (no credentials). */
  repository: string;
  /** The directory, e.g. "transactions/deploy-v2". */
  path: string;
}

export type RollbackVerdict =
  | { kind: 'request' }
  /** Already requested (a re-processed commit): nothing more to do. */
  | { kind: 'requested' }
  | { kind: 'refused'; refusal: RollbackRefusal };

export function rollbackVerdict(current: Transaction | undefined, origin: RollbackOrigin): RollbackVerdict {
  if (!current || current.metadata.deletionTimestamp) return { kind: 'refused', refusal: { kind: 'gone' } };
  const annotations = current.metadata.annotations ?? {};
  const repository = annotations[ANNOTATION_SOURCE_REPOSITORY];
  const path = annotations[ANNOTATION_SOURCE_PATH];
  if (current.metadata.uid !== origin.uid || repository !== origin.repository || path !== origin.path) {
    return {
      kind: 'refused',
      refusal: {
        kind: 'not-created-here',
        uid: current.metadata.uid ?? '',
        recordedUid: origin.uid,
        origin: path && repository ? `${path} in ${repository}` : 'no transaction directory',
      },
    };
  }
  if (ANNOTATION_REQUEST_ROLLBACK in annotations) return { kind: 'requested' };
  // A ROLLBACK file is read once: in flight, its request waits until the transaction is Committed.
  if (leavesWork(acceptance('rollback', current).verdict, true)) return { kind: 'request' };
  return { kind: 'refused', refusal: { kind: 'phase', phase: phaseOf(current) } };
}

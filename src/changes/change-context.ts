/**
 * What a change operation works with: the Transaction, the client its requests go through (as
 * the transaction's ServiceAccount, or as the person running `janus plan` as themselves), and the
 * change with its resolved target. No SagaRun: the controller's stages, `janus plan` and
 * `janus recover` all build one.
 */
import type { Change, Transaction } from '../api/v1alpha1/index.ts';
import { KubeApiError } from '../kube/errors.ts';
import type { ObjectRef, Objects } from '../kube/resources.ts';
import { describeTarget, type ResolvedTarget } from '../saga/targets.ts';

export interface ChangeContext {
  txn: Transaction;
  /** Target reads and writes go through this client. */
  objects: Objects;
  /**
   * The age identities for SOPS-encrypted changes, when the caller has them (`janus plan` with a
   * local key file); otherwise they are read through `objects` (changes/age-keys.ts).
   */
  ageIdentities?: readonly string[];
}

export interface ChangeItem {
  index: number;
  change: Change;
  target: ResolvedTarget;
}

export function refOf(item: ChangeItem): ObjectRef {
  return {
    apiVersion: item.target.apiVersion,
    kind: item.target.kind,
    name: item.target.name,
    namespace: item.target.namespace,
  };
}

/** A message for an API refusal that names the change and its target. */
export function describeFailure(item: ChangeItem, verb: string, e: unknown): string {
  const reason = e instanceof KubeApiError ? `${e.reason}: ${e.serverMessage}` : String(e);
  return `change ${item.index} (${item.change.type} ${describeTarget(item.target)}): ${verb} refused: ${reason}`;
}

/** Stands for the uid of a Transaction that does not exist yet; as long as a real one. */
export const PLANNED_UID = '00000000-0000-0000-0000-000000000000';

/**
 * A Transaction planned before it is created has no uid. The stand-in keeps the applied-by stamp
 * and the field manager the dry run sends exactly as long as the controller's, so a size limit
 * (256 KiB of annotations, 128 characters of field manager) refuses both or neither.
 */
export function beforeCreation(txn: Transaction): Transaction {
  return txn.metadata.uid ? txn : { ...txn, metadata: { ...txn.metadata, uid: PLANNED_UID } };
}

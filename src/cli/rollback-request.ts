/**
 * What `janus rollback` does to a Transaction in each phase, and how a requested rollback ended.
 * Pure: the command reads, decides here, then writes.
 */
import {
  ANNOTATION_REQUEST_ROLLBACK,
  ANNOTATION_RETRY_ROLLBACK,
  type Transaction,
} from '../api/v1alpha1/index.ts';

export type RollbackDecision =
  /** Set `annotation`: the controller then rolls the transaction back. */
  | { kind: 'request'; annotation: string; message: string }
  /** A rollback is already requested or running: nothing to write, but there is something to wait for. */
  | { kind: 'underway'; annotation: string | undefined; message: string }
  /** Nothing is left to roll back. */
  | { kind: 'done'; message: string }
  /** Not now: the transaction is still being applied. */
  | { kind: 'refused'; message: string };

/** Sets `annotation`, unless it is already set: then that request is underway. */
export function requestOnce(
  txn: Transaction,
  annotation: string,
  messages: { requested: string; already: string },
): RollbackDecision {
  return annotation in (txn.metadata.annotations ?? {})
    ? { kind: 'underway', annotation, message: messages.already }
    : { kind: 'request', annotation, message: messages.requested };
}

const unrolled = (txn: Transaction) =>
  (txn.status?.items ?? []).filter((i) => i.committed && !i.rolledBack).length;

export function decideRollback(txn: Transaction): RollbackDecision {
  const id = `${txn.metadata.namespace}/${txn.metadata.name}`;
  const phase = txn.status?.phase ?? 'Pending';
  switch (phase) {
    case 'Committed':
      return requestOnce(txn, ANNOTATION_REQUEST_ROLLBACK, {
        already: `a rollback of ${id} is already requested`,
        requested: `rollback of ${id} requested: its ${unrolled(txn)} committed change(s) will be undone in reverse order`,
      });
    case 'Failed':
      if (unrolled(txn) === 0) {
        return {
          kind: 'done',
          message: `${id} failed before any change was committed: nothing to roll back`,
        };
      }
      return requestOnce(txn, ANNOTATION_RETRY_ROLLBACK, {
        already: `a retry of the rollback of ${id} is already requested`,
        requested: `retry of the rollback of ${id} requested: ${unrolled(txn)} change(s) are still to be undone`,
      });
    case 'RollingBack':
      return { kind: 'underway', annotation: undefined, message: `${id} is already rolling back` };
    case 'RolledBack':
      return { kind: 'done', message: `${id} is already rolled back` };
    default:
      return {
        kind: 'refused',
        message:
          `${id} is ${phase}: it is still being applied, and rolls back by itself if a change fails. ` +
          `Once it is Committed, run janus rollback again (follow it with: janus status ${txn.metadata.name} -n ${txn.metadata.namespace} --watch)`,
      };
  }
}

export type RollbackOutcome = { ok: true; message: string } | { ok: false; message: string };

const messageOf = (txn: Transaction, type: string) =>
  txn.status?.conditions?.find((c) => c.type === type && c.message)?.message;

/**
 * How a requested rollback ended, once it has: undefined while the request is not yet taken
 * (the annotation is still there) or the rollback is still running.
 */
export function rollbackOutcome(
  txn: Transaction | undefined,
  annotation: string | undefined,
): RollbackOutcome | undefined {
  if (!txn) return { ok: false, message: 'the Transaction was deleted' };
  const id = `${txn.metadata.namespace}/${txn.metadata.name}`;
  if (annotation && annotation in (txn.metadata.annotations ?? {})) return undefined;
  switch (txn.status?.phase) {
    case 'RolledBack':
      return {
        ok: true,
        message: `${id} is RolledBack: ${messageOf(txn, 'RolledBack') ?? 'every committed change was undone'}`,
      };
    case 'Failed':
      return {
        ok: false,
        message: `${id} is Failed: ${messageOf(txn, 'Stalled') ?? messageOf(txn, 'Ready') ?? 'the rollback did not finish'}`,
      };
    case 'Committed':
      // The controller removed the annotation without starting a rollback.
      return {
        ok: false,
        message: `${id} is still Committed: the controller did not take the request (see its Events)`,
      };
    default:
      return undefined;
  }
}

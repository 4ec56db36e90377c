/**
 * What `janus rollback` (and the other requests the CLI makes) does to a Transaction, from the
 * requests table (src/api/requests.ts), and how a requested rollback ended. Pure: the command
 * reads, decides here, then writes.
 */
import { acceptance, REQUEST_ANNOTATIONS, type RequestKind } from '../api/requests.ts';
import type { Transaction } from '../api/v1alpha1/index.ts';
import { unrolledCommits } from '../saga/decide.ts';

export type RollbackDecision =
  /** Set `annotation`: the controller then rolls the transaction back. */
  | { kind: 'request'; annotation: string; message: string }
  /** A rollback is already requested or running: nothing to write, but there is something to wait for. */
  | { kind: 'underway'; annotation: string | undefined; message: string }
  /** Nothing is left to roll back. */
  | { kind: 'done'; message: string }
  /** Not now: the transaction is still being applied. */
  | { kind: 'refused'; message: string };

/**
 * What asking `request` does now, as the requests table says: a request the controller would
 * only keep waiting is refused (the person can come back), and one refused in favour of another
 * (a rollback of a Failed transaction is a retry of its rollback) becomes that one.
 */
export function decideRequest(
  txn: Transaction,
  request: RequestKind,
  messages: { requested: string; already: string },
): RollbackDecision {
  const { verdict, message } = acceptance(request, txn);
  if (verdict === 'accept') {
    const annotation = REQUEST_ANNOTATIONS[request];
    return annotation in (txn.metadata.annotations ?? {})
      ? { kind: 'underway', annotation, message: messages.already }
      : { kind: 'request', annotation, message: messages.requested };
  }
  if (verdict === 'underway') return { kind: 'underway', annotation: undefined, message };
  if (verdict === 'done') return { kind: 'done', message };
  return { kind: 'refused', message };
}

/** `janus rollback`: a rollback of a Committed transaction, or a retry of a failed rollback. */
export function decideRollback(txn: Transaction): RollbackDecision {
  const id = `${txn.metadata.namespace}/${txn.metadata.name}`;
  const instead = acceptance('rollback', txn).instead;
  if (instead === 'retry-rollback') {
    return decideRequest(txn, instead, {
      already: `a retry of the rollback of ${id} is already requested`,
      requested: `retry of the rollback of ${id} requested: ${unrolledCommits(txn)} change(s) are still to be undone`,
    });
  }
  return decideRequest(txn, 'rollback', {
    already: `a rollback of ${id} is already requested`,
    requested: `rollback of ${id} requested: its ${unrolledCommits(txn)} committed change(s) will be undone in reverse order`,
  });
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

/** What `janus cancel` does to a Transaction in each phase. Pure: the command reads, decides here, then writes. */
import { ANNOTATION_CANCEL, type Transaction } from '../api/v1alpha1/index.ts';
import { type RollbackDecision, requestOnce } from './rollback-request.ts';

export function decideCancel(txn: Transaction): RollbackDecision {
  const id = `${txn.metadata.namespace}/${txn.metadata.name}`;
  const phase = txn.status?.phase ?? 'Pending';
  switch (phase) {
    case 'Committed':
      return {
        kind: 'refused',
        message: `${id} is already Committed: there is nothing in flight to cancel. To undo it: janus rollback ${txn.metadata.name} -n ${txn.metadata.namespace}`,
      };
    case 'RolledBack':
      return { kind: 'done', message: `${id} is already rolled back` };
    case 'Failed':
      return {
        kind: 'refused',
        message: `${id} has already ended Failed: nothing is in flight. janus status ${txn.metadata.name} -n ${txn.metadata.namespace} says what is left`,
      };
    case 'RollingBack':
      return { kind: 'underway', annotation: undefined, message: `${id} is already rolling back` };
    default:
      return requestOnce(txn, ANNOTATION_CANCEL, {
        already: `a cancel of ${id} is already requested`,
        requested: `cancel of ${id} (${phase}) requested: it stops, and whatever it committed is undone in reverse order`,
      });
  }
}

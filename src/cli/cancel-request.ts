/** What `janus cancel` does to a Transaction, from the requests table. Pure: the command reads, decides here, then writes. */
import type { Transaction } from '../api/v1alpha1/index.ts';
import { decideRequest, type RollbackDecision } from './rollback-request.ts';

export function decideCancel(txn: Transaction): RollbackDecision {
  const id = `${txn.metadata.namespace}/${txn.metadata.name}`;
  return decideRequest(txn, 'cancel', {
    already: `a cancel of ${id} is already requested`,
    requested: `cancel of ${id} (${txn.status?.phase ?? 'Pending'}) requested: it stops, and whatever it committed is undone in reverse order`,
  });
}

/** Builds Transactions in a given persisted state for the pure saga rules. */
import {
  FINALIZER,
  type ItemStatus,
  type Phase,
  type Transaction,
  type TransactionStatus,
} from '../../../src/api/v1alpha1/index.ts';
import { aTransaction } from '../../support/transactions.ts';

export interface TxnState {
  /** Undefined: no status at all (a Transaction just created). */
  phase?: Phase;
  finalizer?: boolean;
  deletionTimestamp?: string;
  annotations?: Record<string, string>;
  items?: ItemStatus[];
  status?: Partial<TransactionStatus>;
}

export function txnIn(state: TxnState = {}): Transaction {
  const { phase, finalizer = true, deletionTimestamp, annotations, items, status } = state;
  return aTransaction({
    uid: '7f0c1a52-0000-4000-8000-000000000001',
    generation: 1,
    ...(finalizer && { finalizers: [FINALIZER] }),
    ...(deletionTimestamp && { deletionTimestamp }),
    ...(annotations && { annotations }),
    serviceAccountName: 'deploy-sa',
    changes: [
      {
        target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'app-config' },
        type: 'Patch',
        content: { data: { mode: 'blue' } },
      },
    ],
    ...((phase !== undefined || items !== undefined || status !== undefined) && {
      status: { ...(phase && { phase }), ...(items && { items }), ...status },
    }),
  });
}

/** Item states, as the saga records them. */
export const item = {
  prepared: (): ItemStatus => ({ prepared: true, committed: false, rolledBack: false }),
  committed: (): ItemStatus => ({ prepared: true, committed: true, rolledBack: false }),
  rolledBack: (): ItemStatus => ({ prepared: true, committed: true, rolledBack: true }),
  failedToRollBack: (): ItemStatus => ({
    prepared: true,
    committed: true,
    rolledBack: false,
    error: 'connection refused',
  }),
  conflict: (): ItemStatus => ({
    prepared: true,
    committed: true,
    rolledBack: false,
    conflict: true,
    error: 'changed by someone else after commit',
  }),
};

export const IN_FLIGHT: readonly Phase[] = [
  'Pending',
  'Preparing',
  'Prepared',
  'Committing',
  'Verifying',
  'RollingBack',
];
export const TERMINAL: readonly Phase[] = ['Committed', 'RolledBack', 'Failed'];
export const ALL_PHASES: readonly Phase[] = [...IN_FLIGHT, ...TERMINAL];

/** Transactions in a chosen state, for the CLI's pure rendering and decisions. */
import type { Condition, ItemStatus, Phase, Transaction } from '../../../src/api/v1alpha1/index.ts';
import { aTransaction } from '../../support/transactions.ts';

export const NOW = Date.parse('2025-06-01T12:00:00Z');
export const ago = (seconds: number) => new Date(NOW - seconds * 1000).toISOString();

export function txn(
  opts: {
    name?: string;
    namespace?: string;
    phase?: Phase;
    items?: ItemStatus[];
    conditions?: Partial<Condition>[];
    annotations?: Record<string, string>;
  } = {},
): Transaction {
  return aTransaction({
    ...(opts.name && { name: opts.name }),
    ...(opts.namespace && { namespace: opts.namespace }),
    uid: 'uid-1',
    resourceVersion: '100',
    creationTimestamp: ago(90),
    ...(opts.annotations && { annotations: opts.annotations }),
    changes: [
      {
        target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'app-config' },
        type: 'Patch',
        content: { data: {} },
      },
      {
        target: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        type: 'Patch',
        content: { spec: {} },
      },
      {
        target: { apiVersion: 'v1', kind: 'Secret', name: 'web-credentials' },
        type: 'Update',
        content: {},
      },
    ],
    ...(opts.phase && {
      status: {
        phase: opts.phase,
        ...(opts.items && { items: opts.items }),
        conditions: (opts.conditions ?? []).map((c) => ({
          type: 'Ready',
          status: 'False',
          reason: 'Unknown',
          lastTransitionTime: ago(10),
          ...c,
        })) as Condition[],
      },
    }),
  });
}

const TARGETS = [
  'v1 ConfigMap shop/app-config',
  'apps/v1 Deployment shop/web',
  'v1 Secret shop/web-credentials',
];

export const item = (index: number, state: Partial<ItemStatus> = {}): ItemStatus => ({
  target: TARGETS[index] ?? `v1 ConfigMap shop/item-${index}`,
  prepared: true,
  ...state,
});

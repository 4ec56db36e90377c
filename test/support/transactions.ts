/**
 * Transactions built by hand, for the pure code's unit tests and for the integration fixtures:
 * one shape, with only the parts a test cares about named. Defaults: shop/deploy-v2, run as the
 * ServiceAccount deployer, no changes, no status.
 */
import {
  ANNOTATION_SOURCE_PATH,
  ANNOTATION_SOURCE_REPOSITORY,
  ANNOTATION_SOURCE_REVISION,
  ANNOTATION_SOURCE_SEQUENCE,
  type Change,
  type Transaction,
  type TransactionStatus,
} from '../../src/api/v1alpha1/index.ts';

export interface TransactionParts {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  finalizers?: string[];
  deletionTimestamp?: string;
  annotations?: Record<string, string>;
  serviceAccountName?: string;
  /** The rest of the spec (timeout, lockTimeout, health). */
  spec?: Omit<Partial<Transaction['spec']>, 'serviceAccountName' | 'changes'>;
  changes?: Change[];
  status?: TransactionStatus;
}

export function aTransaction(parts: TransactionParts = {}): Transaction {
  const { uid, resourceVersion, generation, creationTimestamp, finalizers, deletionTimestamp, annotations } =
    parts;
  return {
    apiVersion: 'tx.janus.io/v1alpha1',
    kind: 'Transaction',
    metadata: {
      name: parts.name ?? 'deploy-v2',
      namespace: parts.namespace ?? 'shop',
      ...(uid !== undefined && { uid }),
      ...(resourceVersion !== undefined && { resourceVersion }),
      ...(generation !== undefined && { generation }),
      ...(creationTimestamp !== undefined && { creationTimestamp }),
      ...(finalizers && { finalizers }),
      ...(deletionTimestamp && { deletionTimestamp }),
      ...(annotations && { annotations }),
    },
    spec: {
      serviceAccountName: parts.serviceAccountName ?? 'deployer',
      ...parts.spec,
      changes: parts.changes ?? [],
    },
    ...(parts.status && { status: parts.status }),
  };
}

/** The annotations a Transaction made from a Git directory carries. */
export function sourceAnnotations(source: {
  repository: string;
  revision?: string;
  path: string;
  sequence?: string;
}): Record<string, string> {
  return {
    [ANNOTATION_SOURCE_REPOSITORY]: source.repository,
    ...(source.revision && { [ANNOTATION_SOURCE_REVISION]: source.revision }),
    [ANNOTATION_SOURCE_PATH]: source.path,
    ...(source.sequence && { [ANNOTATION_SOURCE_SEQUENCE]: source.sequence }),
  };
}

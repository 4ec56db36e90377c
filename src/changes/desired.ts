/** The object a Create, Update or Patch sends: the content, the target's identity, our stamp. */
import type { Transaction } from '../api/v1alpha1/index.ts';
import type { KubeObject } from '../kube/resources.ts';
import { ANNOTATION_APPLIED_BY, appliedByValue } from '../saga/targets.ts';
import type { ChangeItem } from './change-context.ts';

export function desiredObject(txn: Transaction, item: ChangeItem, resourceVersion?: string): KubeObject {
  const content = (item.change.content ?? {}) as Partial<KubeObject>;
  const { status: _status, ...rest } = content as Record<string, unknown>;
  const meta = (content.metadata ?? {}) as KubeObject['metadata'];
  return {
    ...rest,
    apiVersion: item.target.apiVersion,
    kind: item.target.kind,
    metadata: {
      ...meta,
      name: item.target.name,
      ...(item.target.namespace && { namespace: item.target.namespace }),
      ...(resourceVersion && { resourceVersion }),
      annotations: { ...meta.annotations, [ANNOTATION_APPLIED_BY]: appliedByValue(txn, item.index) },
    },
  };
}

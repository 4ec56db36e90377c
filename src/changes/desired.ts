/** The object a Create, Update or Patch sends: the content, the target's identity, our stamp. */
import type { Transaction } from '../api/v1alpha1/index.ts';
import type { KubeObject } from '../kube/resources.ts';
import { ANNOTATION_APPLIED_BY, appliedByValue } from '../saga/targets.ts';
import type { ChangeContext, ChangeItem } from './change-context.ts';
import { decryptedItem } from './sops-content.ts';

/** desiredObject, with a SOPS-encrypted content decrypted first (for the one request it is sent in). */
export async function desiredToSend(
  ctx: ChangeContext,
  item: ChangeItem,
  resourceVersion?: string,
): Promise<KubeObject> {
  return desiredObject(ctx.txn, await decryptedItem(ctx, item), resourceVersion);
}

/** The object from a content in clear; an encrypted one must go through desiredToSend. */
export function desiredObject(txn: Transaction, item: ChangeItem, resourceVersion?: string): KubeObject {
  if (item.change.sopsContent !== undefined) {
    throw new Error(`change ${item.index}: its content is SOPS-encrypted and was not decrypted (a bug)`);
  }
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

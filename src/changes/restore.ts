/**
 * Putting a target's prior state back whole, as the undo of a Create, Update or Delete does and
 * as `janus recover --apply` does over someone else's change: every write conditional on the
 * object that was read, so a further change in between is refused, not overwritten.
 */
import { isConflict, isNotFound, KubeApiError } from '../kube/errors.ts';
import type { KubeObject, ObjectRef, Objects } from '../kube/resources.ts';
import { describeError } from '../log/describe-error.ts';
import { cleanForRestore } from './undo-rules.ts';

/** The prior object ready to be written back, conditional on `resourceVersion` when given. */
export function restoredObject(prior: KubeObject, resourceVersion?: string): KubeObject {
  const restored = cleanForRestore(prior);
  return resourceVersion ? { ...restored, metadata: { ...restored.metadata, resourceVersion } } : restored;
}

export type RestoreOperation =
  | { op: 'replace'; object: KubeObject }
  | { op: 'create'; object: KubeObject }
  | { op: 'delete'; resourceVersion: string | undefined }
  | { op: 'none' };

/** How to put the prior state back over the current object (undefined: absent). */
export function restoreOperation(
  prior: KubeObject | undefined,
  current: KubeObject | undefined,
): RestoreOperation {
  if (!prior)
    return current ? { op: 'delete', resourceVersion: current.metadata.resourceVersion } : { op: 'none' };
  if (!current) return { op: 'create', object: restoredObject(prior) };
  return { op: 'replace', object: restoredObject(prior, current.metadata.resourceVersion) };
}

export type RestoreResult = { ok: true } | { ok: false; message: string };

/** Makes a restore operation on `ref` through `objects`. */
export async function restore(
  objects: Objects,
  ref: ObjectRef,
  op: RestoreOperation,
): Promise<RestoreResult> {
  try {
    switch (op.op) {
      case 'replace':
        await objects.replace(op.object);
        break;
      case 'create':
        await objects.create(op.object);
        break;
      case 'delete':
        await objects.delete(ref, { preconditions: { resourceVersion: op.resourceVersion } });
        break;
      case 'none':
        break;
    }
    return { ok: true };
  } catch (e) {
    if (isConflict(e) || (op.op === 'create' && e instanceof KubeApiError && e.reason === 'AlreadyExists')) {
      return {
        ok: false,
        message: 'it changed again since it was read: run janus recover again to see the new difference',
      };
    }
    if (op.op === 'delete' && isNotFound(e)) return { ok: true };
    return {
      ok: false,
      message: e instanceof KubeApiError ? `${e.reason}: ${e.serverMessage}` : describeError(e).message,
    };
  }
}

/**
 * The API operations of one change, made as the transaction's ServiceAccount: dry run, commit,
 * and undo. Every write carries the resourceVersion its decision was based on, so a concurrent
 * write makes it fail instead of being overwritten; a failed precondition is then told apart
 * from this transaction's own earlier write (a restart) by the applied-by annotation or content.
 */
import type { ItemStatus } from '../api/v1alpha1/index.ts';
import { isAlreadyExists, isConflict, isNotFound, isTransient, KubeApiError } from '../kube/errors.ts';
import type { KubeObject, ObjectRef } from '../kube/resources.ts';
import { cleanForRestore, patchIsUndone, reverseApply, sameContent } from '../saga/restore.ts';
import {
  ANNOTATION_APPLIED_BY,
  appliedByValue,
  committedFieldManager,
  describeTarget,
  fieldManager,
  isAppliedBy,
} from '../saga/targets.ts';
import type { Item, SagaRun } from './context.ts';

export type CommitResult =
  | { kind: 'committed'; resourceVersion: string; recognized: boolean }
  | { kind: 'conflict'; message: string }
  | { kind: 'failed'; message: string };

export type UndoResult =
  | { kind: 'undone' }
  | { kind: 'conflict'; message: string }
  | { kind: 'failed'; message: string };

export function refOf(item: Item): ObjectRef {
  return {
    apiVersion: item.target.apiVersion,
    kind: item.target.kind,
    name: item.target.name,
    namespace: item.target.namespace,
  };
}

/** The object a Create, Update or Patch sends: the content, the target's identity, our stamp. */
export function desiredObject(run: SagaRun, item: Item, resourceVersion?: string): KubeObject {
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
      annotations: { ...meta.annotations, [ANNOTATION_APPLIED_BY]: appliedByValue(run.txn, item.index) },
    },
  };
}

/** A message for an API refusal that names the change and its target. */
export function describeFailure(item: Item, verb: string, e: unknown): string {
  const reason = e instanceof KubeApiError ? `${e.reason}: ${e.serverMessage}` : String(e);
  return `change ${item.index} (${item.change.type} ${describeTarget(item.target)}): ${verb} refused: ${reason}`;
}

/**
 * Server-side dry run of a change, as the ServiceAccount, against the target's current state;
 * throws when refused. It runs before the target is locked, so it is what proves the
 * ServiceAccount may make the change at all; the commit's own resourceVersion precondition
 * covers whatever happens between it and the lock.
 */
export async function dryRun(run: SagaRun, item: Item): Promise<void> {
  const sa = run.asServiceAccount();
  switch (item.change.type) {
    case 'Create':
      await sa.create(desiredObject(run, item), { dryRun: true, fieldManager: fieldManager(run.txn) });
      return;
    case 'Update':
      await sa.replace(desiredObject(run, item), { dryRun: true, fieldManager: fieldManager(run.txn) });
      return;
    case 'Patch':
      await sa.apply(desiredObject(run, item), {
        dryRun: true,
        fieldManager: fieldManager(run.txn),
        force: true,
      });
      return;
    case 'Delete':
      await sa.delete(refOf(item), { dryRun: true });
      return;
  }
}

/** Applies a change, conditionally on the resourceVersion seen at prepare. */
export async function commit(run: SagaRun, item: Item, prepared: ItemStatus): Promise<CommitResult> {
  const sa = run.asServiceAccount();
  const rv = prepared.resourceVersion || undefined;
  try {
    switch (item.change.type) {
      case 'Create': {
        const created = await sa.create(desiredObject(run, item), {
          fieldManager: committedFieldManager(run.txn),
        });
        return committed(created, false);
      }
      case 'Update': {
        const replaced = await sa.replace(desiredObject(run, item, rv), {
          fieldManager: committedFieldManager(run.txn),
        });
        return committed(replaced, false);
      }
      case 'Patch': {
        const applied = await sa.apply(desiredObject(run, item, rv), {
          fieldManager: committedFieldManager(run.txn),
          force: true,
        });
        return committed(applied, false);
      }
      case 'Delete': {
        if (!rv) return { kind: 'committed', resourceVersion: '', recognized: false }; // nothing was there
        await sa.delete(refOf(item), { preconditions: { resourceVersion: rv } });
        return { kind: 'committed', resourceVersion: '', recognized: false };
      }
    }
  } catch (e) {
    if (item.change.type === 'Delete' && isNotFound(e)) {
      return { kind: 'committed', resourceVersion: '', recognized: true }; // already gone: idempotent
    }
    if (isConflict(e) || isAlreadyExists(e) || isNotFound(e)) {
      const ours = await probe(run, item);
      if (ours !== undefined) return { kind: 'committed', resourceVersion: ours, recognized: true };
      return { kind: 'conflict', message: conflictMessage(item, e) };
    }
    if (isTransient(e)) throw e;
    return { kind: 'failed', message: describeFailure(item, item.change.type.toLowerCase(), e) };
  }
}

function committed(obj: KubeObject, recognized: boolean): CommitResult {
  return { kind: 'committed', resourceVersion: obj.metadata.resourceVersion ?? '', recognized };
}

function conflictMessage(item: Item, e: unknown): string {
  const what = describeTarget(item.target);
  if (isAlreadyExists(e)) return `change ${item.index}: ${what} was created by someone else after prepare`;
  if (isNotFound(e)) return `change ${item.index}: ${what} was deleted by someone else after prepare`;
  return `change ${item.index}: ${what} was changed by someone else after prepare`;
}

/**
 * Whether this transaction's write of `item` is in place (after a restart, a retry, or before a
 * rollback whose progress was not recorded): the target's resourceVersion if so.
 */
export async function probe(run: SagaRun, item: Item): Promise<string | undefined> {
  const current = await run.asServiceAccount().find(refOf(item));
  if (item.change.type === 'Delete') return current ? undefined : '';
  return current && isAppliedBy(current.metadata, run.txn, item.index)
    ? (current.metadata.resourceVersion ?? '')
    : undefined;
}

/** Undoes a committed change, conditionally on the resourceVersion our commit left. */
export async function undo(
  run: SagaRun,
  item: Item,
  status: ItemStatus,
  prior: KubeObject | undefined,
): Promise<UndoResult> {
  const sa = run.asServiceAccount();
  const rv = status.committedResourceVersion || undefined;
  const conflict = (detail: string): UndoResult => ({
    kind: 'conflict',
    message: `${describeTarget(item.target)} ${detail} after change ${item.index} was committed`,
  });
  try {
    if (!prior) {
      if (item.change.type === 'Delete') return { kind: 'undone' }; // the delete found nothing to delete
      // Created by us: delete it only if it is still the object we created.
      await sa.delete(refOf(item), { preconditions: { resourceVersion: rv } });
      return { kind: 'undone' };
    }
    const restored = cleanForRestore(prior);
    switch (item.change.type) {
      case 'Delete':
        await sa.create(restored, { fieldManager: committedFieldManager(run.txn) });
        return { kind: 'undone' };
      case 'Create':
      case 'Update':
        await sa.replace({
          ...restored,
          metadata: { ...restored.metadata, ...(rv && { resourceVersion: rv }) },
        });
        return { kind: 'undone' };
      case 'Patch': {
        const reverse = reverseApply(desiredObject(run, item), prior);
        if (rv) reverse.metadata.resourceVersion = rv;
        await sa.apply(reverse, { fieldManager: committedFieldManager(run.txn), force: true });
        return { kind: 'undone' };
      }
    }
  } catch (e) {
    if (isTransient(e)) throw e;
    if (!(isConflict(e) || isAlreadyExists(e) || isNotFound(e))) {
      return { kind: 'failed', message: describeFailure(item, 'rollback', e) };
    }
    const current = await sa.find(refOf(item));
    if (!prior) return current ? conflict('was changed by someone else') : { kind: 'undone' };
    if (!current) return conflict('was deleted by someone else');
    const done =
      item.change.type === 'Patch'
        ? patchIsUndone(desiredObject(run, item), prior, current)
        : sameContent(prior, current);
    return done ? { kind: 'undone' } : conflict('was changed by someone else');
  }
  return { kind: 'undone' };
}

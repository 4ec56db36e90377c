/**
 * The API operations of one change, made as the transaction's ServiceAccount: dry run, commit,
 * and undo. Every write carries the resourceVersion its decision was based on, so a concurrent
 * write makes it fail instead of being overwritten; a failed precondition is then told apart
 * from this transaction's own earlier write (a restart) by the applied-by annotation or content.
 */
import type { ItemStatus } from '../api/v1alpha1/index.ts';
import { isAlreadyExists, isConflict, isNotFound, isTransient, KubeApiError } from '../kube/errors.ts';
import type { KubeObject, ObjectRef } from '../kube/resources.ts';
import {
  cleanForRestore,
  contentFingerprint,
  patchIsUndone,
  reverseApply,
  sameContent,
} from '../saga/restore.ts';
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
  | {
      kind: 'committed';
      resourceVersion: string;
      /** contentFingerprint of what the change left; empty for a Delete. */
      fingerprint: string;
      recognized: boolean;
    }
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
        if (!rv) return gone(false); // nothing was there
        await sa.delete(refOf(item), { preconditions: { resourceVersion: rv } });
        return gone(false);
      }
    }
  } catch (e) {
    if (item.change.type === 'Delete' && isNotFound(e)) {
      return gone(true); // already gone: idempotent
    }
    if (isConflict(e) || isAlreadyExists(e) || isNotFound(e)) {
      const ours = await probe(run, item);
      if (ours !== undefined) return ours;
      return { kind: 'conflict', message: conflictMessage(item, e) };
    }
    if (isTransient(e)) throw e;
    return { kind: 'failed', message: describeFailure(item, item.change.type.toLowerCase(), e) };
  }
}

function committed(obj: KubeObject, recognized: boolean): CommitResult & { kind: 'committed' } {
  return {
    kind: 'committed',
    resourceVersion: obj.metadata.resourceVersion ?? '',
    fingerprint: contentFingerprint(obj),
    recognized,
  };
}

const gone = (recognized: boolean): CommitResult & { kind: 'committed' } => ({
  kind: 'committed',
  resourceVersion: '',
  fingerprint: '',
  recognized,
});

function conflictMessage(item: Item, e: unknown): string {
  const what = describeTarget(item.target);
  if (isAlreadyExists(e)) return `change ${item.index}: ${what} was created by someone else after prepare`;
  if (isNotFound(e)) return `change ${item.index}: ${what} was deleted by someone else after prepare`;
  return `change ${item.index}: ${what} was changed by someone else after prepare`;
}

/**
 * Whether this transaction's write of `item` is in place (after a restart, a retry, or before a
 * rollback whose progress was not recorded): what the commit left if so.
 */
export async function probe(
  run: SagaRun,
  item: Item,
): Promise<(CommitResult & { kind: 'committed' }) | undefined> {
  const current = await run.asServiceAccount().find(refOf(item));
  if (item.change.type === 'Delete') return current ? undefined : gone(true);
  return current && isAppliedBy(current.metadata, run.txn, item.index) ? committed(current, true) : undefined;
}

/** A controller writing status after our commit is not a conflict; let the undo try again. */
const MAX_UNDO_ATTEMPTS = 5;

/**
 * Undoes a committed change, conditionally on the resourceVersion our commit left. When the
 * target moved on only by its controller's status writes (its content fingerprint is still the
 * one our commit left), the undo is made against the newer resourceVersion instead.
 */
export async function undo(
  run: SagaRun,
  item: Item,
  status: ItemStatus,
  prior: KubeObject | undefined,
): Promise<UndoResult> {
  let rv = status.committedResourceVersion || undefined;
  for (let attempt = 1; ; attempt++) {
    const result = await undoAt(run, item, prior, rv);
    if (result.kind !== 'stale' || attempt >= MAX_UNDO_ATTEMPTS) {
      return result.kind === 'stale' ? await judgeConflict(run, item, prior) : result;
    }
    const current = await run.asServiceAccount().find(refOf(item));
    if (
      !current ||
      !status.committedFingerprint ||
      contentFingerprint(current) !== status.committedFingerprint
    ) {
      return judgeConflict(run, item, prior, current ?? null);
    }
    rv = current.metadata.resourceVersion;
  }
}

type UndoAttempt = UndoResult | { kind: 'stale' };

async function undoAt(
  run: SagaRun,
  item: Item,
  prior: KubeObject | undefined,
  rv: string | undefined,
): Promise<UndoAttempt> {
  const sa = run.asServiceAccount();
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
    if (isConflict(e) && rv) return { kind: 'stale' };
    if (!(isConflict(e) || isAlreadyExists(e) || isNotFound(e))) {
      return { kind: 'failed', message: describeFailure(item, 'rollback', e) };
    }
    return judgeConflict(run, item, prior);
  }
  return { kind: 'undone' };
}

/**
 * The undo could not be made as it was: already made before a restart (the target holds what
 * the rollback would write), or someone else changed the target after our commit.
 */
async function judgeConflict(
  run: SagaRun,
  item: Item,
  prior: KubeObject | undefined,
  read?: KubeObject | null,
): Promise<UndoResult> {
  const conflict = (detail: string): UndoResult => ({
    kind: 'conflict',
    message: `${describeTarget(item.target)} ${detail} after change ${item.index} was committed`,
  });
  const current = read === undefined ? await run.asServiceAccount().find(refOf(item)) : (read ?? undefined);
  if (!prior) return current ? conflict('was changed by someone else') : { kind: 'undone' };
  if (!current) return conflict('was deleted by someone else');
  const done =
    item.change.type === 'Patch'
      ? patchIsUndone(desiredObject(run, item), prior, current)
      : sameContent(prior, current);
  return done ? { kind: 'undone' } : conflict('was changed by someone else');
}

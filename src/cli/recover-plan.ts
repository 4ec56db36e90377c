/**
 * The pure rules of `janus recover`: which changes a failed rollback left standing, which of
 * them a human may restore, and how a restore is described (src/changes/restore.ts makes it).
 */
import type { ChangeTarget, ChangeType, Transaction } from '../api/v1alpha1/index.ts';
import type { RestoreOperation } from '../changes/restore.ts';
import { UsageError } from './command.ts';

export interface StandingItem {
  index: number;
  type: ChangeType;
  target: ChangeTarget;
  /** As the status names it: "<apiVersion> <kind> <namespace>/<name>". */
  description: string;
  /** Someone else changed the target after commit; only these are restored by hand. */
  conflict: boolean;
  error: string;
  /** The lock Lease, "<namespace>/<name>", if the status recorded one. */
  lease: string | undefined;
}

/** Committed changes the rollback did not undo, in change order. */
export function standingItems(txn: Transaction): StandingItem[] {
  const items = txn.status?.items ?? [];
  return txn.spec.changes.flatMap((change, index): StandingItem[] => {
    const item = items[index];
    if (!item?.committed || item.rolledBack) return [];
    const t = change.target;
    return [
      {
        index,
        type: change.type,
        target: t,
        description:
          item.target ?? `${t.apiVersion} ${t.kind} ${t.namespace ?? txn.metadata.namespace}/${t.name}`,
        conflict: item.conflict === true,
        error: item.error ?? '',
        lease: item.lease || undefined,
      },
    ];
  });
}

/**
 * `--apply all` or `--apply 0,2`: the change indices to restore. Only conflicts may be named: a
 * change whose undo was refused (RBAC, admission) is retried by the controller, not overwritten.
 */
export function parseSelection(value: string, standing: readonly StandingItem[]): number[] {
  const conflicts = standing.filter((s) => s.conflict).map((s) => s.index);
  if (value.trim() === 'all') {
    if (conflicts.length === 0) throw new UsageError('--apply all: no change is in conflict');
    return conflicts;
  }
  const chosen = value.split(',').map((part) => {
    const text = part.trim();
    const index = Number(text);
    if (text === '' || !Number.isInteger(index) || index < 0) {
      throw new UsageError(`--apply: expected "all" or change numbers such as 0,2; got "${value}"`);
    }
    const item = standing.find((s) => s.index === index);
    if (!item) {
      throw new UsageError(
        `--apply: change ${index} is not left standing by the rollback (standing: ${standing.map((s) => s.index).join(', ') || 'none'})`,
      );
    }
    if (!item.conflict) {
      throw new UsageError(
        `--apply: change ${index} is not a conflict: its undo was refused (${item.error || 'no detail'}). ` +
          'Fix the cause, then retry the rollback with janus rollback',
      );
    }
    return index;
  });
  return [...new Set(chosen)].sort((a, b) => a - b);
}

export function describeOperation(op: RestoreOperation): string {
  switch (op.op) {
    case 'replace':
      return 'replace the current object with its prior state';
    case 'create':
      return 're-create it as it was (it was deleted after the commit)';
    case 'delete':
      return 'delete it (it did not exist before the transaction)';
    case 'none':
      return 'nothing: it does not exist, as before the transaction';
  }
}

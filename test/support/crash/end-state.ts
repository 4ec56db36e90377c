/**
 * Where a crashed saga ended, compared with where the uninterrupted one ended: the phase, each
 * item's status (without resourceVersions or namespaces, which differ from run to run) and what
 * the targets hold. Shared by both layers of crash tests: the real controller process killed
 * (test/crash/) and the in-memory one (test/unit/crash/). Pure.
 */
import { expect } from 'vitest';
import type { Phase, Transaction } from '../../../src/api/v1alpha1/index.ts';

export interface EndState {
  phase: Phase | undefined;
  items: unknown;
  targets: unknown;
}

/** Item status without resourceVersions or namespaces, which differ from run to run. */
export function comparableItems(txn: Transaction) {
  return (txn.status?.items ?? []).map((i) => ({
    target: i.target?.replace(`${txn.metadata.namespace}/`, ''),
    prepared: i.prepared,
    committed: i.committed,
    rolledBack: i.rolledBack ?? false,
    conflict: i.conflict ?? false,
    failed: Boolean(i.error),
  }));
}

/** Every outcome ends where the uninterrupted run did: the same phase, item status and targets. */
export function expectEndsAsBaseline(
  outcomes: ReadonlyArray<EndState & { k: number }>,
  baseline: EndState,
): void {
  for (const o of outcomes) {
    expect({ k: o.k, phase: o.phase, items: o.items, targets: o.targets }).toEqual({
      k: o.k,
      phase: baseline.phase,
      items: baseline.items,
      targets: baseline.targets,
    });
  }
}

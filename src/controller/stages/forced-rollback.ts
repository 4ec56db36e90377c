/**
 * Rollbacks that finish: the side effects of src/health/forced-rollback.ts.
 *
 * - `recordRolloutRevisions`, before the rollback restores anything: each StatefulSet's update
 *   revision (the one the transaction's change rolled out) is written to its item's
 *   `rolloutRevision`. Written before the undo, so a controller killed at any instant after the
 *   undo still knows which revision was the bad one (the set's own status by then names the
 *   restored one).
 * - `forceRollback`, at each look of the rollback's health check: deletes, as the transaction's
 *   ServiceAccount, the stuck pods of that revision its controller will never replace. Idempotent
 *   (a pod already deleted or recreated is skipped: the uid is the precondition), so a restart
 *   simply looks again. A refused deletion, or a workload for which no step exists, ends the
 *   check at once with what a human must do.
 */
import type { ItemStatus } from '../../api/v1alpha1/index.ts';
import { refOf } from '../../changes/change-context.ts';
import { deletionRefused, describePods, forcedRollback } from '../../health/forced-rollback.ts';
import type { HealthAssessment } from '../../health/index.ts';
import { isConflict, isForbidden, isNotFound } from '../../kube/errors.ts';
import type { KubeObject } from '../../kube/resources.ts';
import type { Item, SagaRun } from '../context.ts';
import type { Observation } from '../health-watch.ts';

const isStatefulSet = (item: Item): boolean =>
  item.target.apiVersion === 'apps/v1' && item.target.kind === 'StatefulSet';

/**
 * Records the update revision of every StatefulSet about to be rolled back whose controller has
 * seen the committed template, in one status write before any undo. Unreadable or not yet
 * observed: nothing recorded, and the rollback's check waits as it would without the step.
 */
export async function recordRolloutRevisions(
  run: SagaRun,
  pending: readonly Item[],
  items: ItemStatus[],
): Promise<void> {
  let recorded = false;
  for (const item of pending) {
    const state = items[item.index];
    if (!state || state.rolloutRevision || !isStatefulSet(item)) continue;
    const revision = await observedUpdateRevision(run, item);
    if (!revision) continue;
    items[item.index] = { ...state, rolloutRevision: revision };
    recorded = true;
  }
  if (recorded) await run.writeStatus({ ...run.status, items });
}

async function observedUpdateRevision(run: SagaRun, item: Item): Promise<string | undefined> {
  let sts: KubeObject | undefined;
  try {
    sts = await run.asServiceAccount().find(refOf(item));
  } catch (e) {
    // The undo reads it too and says why it cannot; the record is only a help.
    if (isForbidden(e)) return undefined;
    throw e;
  }
  const status = (sts as { status?: { observedGeneration?: number; updateRevision?: string } } | undefined)
    ?.status;
  if (!sts || (status?.observedGeneration ?? -1) < (sts.metadata.generation ?? 0)) return undefined;
  return status?.updateRevision || undefined;
}

/**
 * The forced-rollback step for the rollback check's gated targets, as they were just observed.
 * Returns the assessments that replace the health rule's: a failure naming what a human must do.
 */
export async function forceRollback(
  run: SagaRun,
  gated: readonly Item[],
  observed: readonly Observation[],
  items: readonly ItemStatus[],
): Promise<Map<number, HealthAssessment>> {
  const failures = new Map<number, HealthAssessment>();
  for (const [k, item] of gated.entries()) {
    const workload = observed[k]?.object;
    if (!workload) continue;
    const step = forcedRollback(
      workload,
      observed[k]?.related.pods ?? [],
      items[item.index]?.rolloutRevision,
    );
    if (step.kind === 'human') failures.set(item.index, step.failure);
    if (step.kind !== 'delete') continue;
    const objects = run.asServiceAccount();
    for (const stuck of step.pods) {
      try {
        await objects.delete(
          {
            apiVersion: 'v1',
            kind: 'Pod',
            name: stuck.pod.metadata.name,
            namespace: stuck.pod.metadata.namespace,
          },
          { preconditions: { uid: stuck.pod.metadata.uid } },
        );
      } catch (e) {
        // Gone already, or recreated under another uid: someone (or a previous look) did it.
        if (isNotFound(e) || isConflict(e)) continue;
        if (!isForbidden(e)) throw e;
        const account = `${run.txn.metadata.namespace}/${run.txn.spec.serviceAccountName}`;
        failures.set(item.index, deletionRefused(workload, step, account, e.serverMessage));
        break;
      }
      await run.event(
        'Normal',
        'ForcedRollback',
        `deleted ${describePods([stuck])} of revision ${step.revision}, which ${workload.kind} ${workload.metadata.namespace}/${workload.metadata.name} would not replace after the rollback restored its template`,
      );
    }
  }
  return failures;
}

/**
 * A Transaction whose status another installation of this instance wrote (status.installation
 * names its namespace). Claims keep two installations of one instance from running side by side
 * (instance-claim.ts); this is the check at run time, for what got past them: the other is alive
 * (a live claim), so this installation does not drive the Transaction, marks it (condition
 * InstallationConflict, a Warning Event, janus_installation_conflicts_total; the alert
 * JanusInstallationConflict) and looks again later. The other is gone (no live claim: uninstalled,
 * moved): this installation takes the Transaction over, and its next status write says so.
 */
import type { Transaction } from '../api/v1alpha1/index.ts';
import { PatchType } from '../kube/client.ts';
import { isConflict } from '../kube/errors.ts';
import { nameOf, Transactions } from '../kube/transactions.ts';
import { mergeConditions } from '../saga/status.ts';
import type { SagaDeps } from './context.ts';
import { CLAIM_RENEW_MS, INSTALLATION_CONFLICT } from './instance-claim.ts';

const WRITTEN_ELSEWHERE = 'WrittenByAnotherInstallation';

/** The namespace of the other installation that wrote this Transaction's status, if another did. */
export function otherWriter(txn: Transaction, controllerNamespace: string): string | undefined {
  const writer = txn.status?.installation;
  return writer !== undefined && writer !== controllerNamespace ? writer : undefined;
}

export function conflictMessage(other: string, mine: string): string {
  return `its status was written by the installation in namespace "${other}", which runs the same instance: this one, in "${mine}", does not drive it while that one is alive. Two installations of one instance must not serve the same namespace: uninstall one, or give it an instance of its own (docs/operations.md, Several installations)`;
}

/**
 * Marks the Transaction (once: a marked one is left alone) and says when to look again: the other
 * installation may stop, and then this one takes over.
 */
export async function markConflict(deps: SagaDeps, txn: Transaction, other: string): Promise<number> {
  const message = conflictMessage(other, deps.controllerNamespace);
  const marked = txn.status?.conditions?.find((c) => c.type === INSTALLATION_CONFLICT);
  if (marked?.status === 'True' && marked.message === message) return CLAIM_RENEW_MS;
  const name = `${txn.metadata.namespace}/${txn.metadata.name}`;
  deps.log.warn({ transaction: name, installation: other }, `${name}: ${message}`);
  deps.metrics.installationConflict();
  const now = new Date(deps.now()).toISOString();
  const conditions = mergeConditions(
    txn.status?.conditions,
    [{ type: INSTALLATION_CONFLICT, status: 'True', reason: WRITTEN_ELSEWHERE, message }],
    now,
    txn.metadata.generation,
  );
  // Conditional on the version read: the other installation's writes are not overwritten.
  try {
    const updated = await new Transactions(deps.client).patchStatus(
      nameOf(txn),
      { metadata: { resourceVersion: txn.metadata.resourceVersion }, status: { conditions } },
      PatchType.merge,
    );
    deps.onWrite(updated);
  } catch (e) {
    if (!isConflict(e)) throw e;
    return 1_000; // written meanwhile: look again soon
  }
  await deps.events.record(txn, 'Warning', INSTALLATION_CONFLICT, message);
  return CLAIM_RENEW_MS;
}

/**
 * Takes the Transaction over from an installation that is gone: its status says so from now on,
 * and the mark of an earlier conflict is cleared. Undefined when it was written meanwhile.
 */
export async function adopt(
  deps: SagaDeps,
  txn: Transaction,
  other: string,
): Promise<Transaction | undefined> {
  const conditions = (txn.status?.conditions ?? []).filter((c) => c.type !== INSTALLATION_CONFLICT);
  try {
    const updated = await new Transactions(deps.client).patchStatus(
      nameOf(txn),
      {
        metadata: { resourceVersion: txn.metadata.resourceVersion },
        status: { installation: deps.controllerNamespace, conditions },
      },
      PatchType.merge,
    );
    deps.onWrite(updated);
    const message = `taken over from the installation in namespace "${other}", which no longer holds a claim on this instance`;
    deps.log.info(
      { transaction: `${txn.metadata.namespace}/${txn.metadata.name}`, installation: other },
      message,
    );
    await deps.events.record(txn, 'Normal', 'InstallationTakeover', message);
    return updated;
  } catch (e) {
    if (isConflict(e)) return undefined;
    throw e;
  }
}

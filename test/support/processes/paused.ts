/** Stopping the controller at an exact saga step, acting, and letting a new one finish the saga. */
import type { Phase, Transaction } from '../../../src/api/v1alpha1/index.ts';
import type { Objects } from '../../../src/kube/resources.ts';
import { getTxn, waitForPhase } from '../cluster/saga.ts';
import { requestNumberAt, requestNumberOf } from '../crash/request-log.ts';
import { type ControllerProcess, startController } from './controller-process.ts';

/**
 * Runs `txn` with a controller that kills itself right after the request that moved the
 * transaction into `phase` (`requests` comes from a baseline run, see requestNumberAt).
 */
export async function runUntil(
  admin: Objects,
  kubeconfig: string,
  txn: Transaction,
  requests: number,
): Promise<Transaction> {
  const namespace = txn.metadata.namespace ?? '';
  const controller = await startController({
    kubeconfig,
    namespace,
    env: { JANUS_TEST_EXIT_AFTER_REQUESTS: String(requests) },
  });
  await admin.create(txn);
  const exit = await controller.exited;
  if (exit !== 'SIGKILL') throw new Error(`controller exited with ${exit}, not at the requested step`);
  return getTxn(admin, namespace, txn.metadata.name);
}

/**
 * A baseline run of `txn` to completion, giving the request number at which it entered `phase`
 * or, with `pathSuffix`, of its first request to that path once in `phase`.
 */
export async function stepOf(
  admin: Objects,
  kubeconfig: string,
  txn: Transaction,
  phase: Phase,
  finalPhase: Phase,
  pathSuffix?: string,
): Promise<number> {
  const namespace = txn.metadata.namespace ?? '';
  const controller: ControllerProcess = await startController({ kubeconfig, namespace });
  await admin.create(txn);
  await waitForPhase(admin, namespace, txn.metadata.name, finalPhase);
  await controller.stop();
  const log = await controller.logs();
  return pathSuffix ? requestNumberOf(log, phase, pathSuffix) : requestNumberAt(log, phase);
}

/**
 * What `janus rollback` and `janus cancel` share: decide from the freshest Transaction whether
 * to set a one-shot annotation (its value the reason), record who asked as an Event, and with
 * --wait follow the rollback to its end.
 */

import type { Transaction } from '../api/v1alpha1/index.ts';
import type { KubeClient } from '../kube/client.ts';
import { EventRecorder } from '../kube/events.ts';
import { whoAmI } from '../kube/who-am-i.ts';
import { decideCancel } from './cancel-request.ts';
import { connect } from './cluster.ts';
import { UsageError } from './command.ts';
import { processStreams } from './output.ts';
import { decideRollback, type RollbackDecision, rollbackOutcome } from './rollback-request.ts';
import { annotateIf } from './transactions.ts';
import { parseTimeout, waitForOutcome } from './wait.ts';

export interface AnnotationRequest {
  command: 'rollback' | 'cancel';
  decide(txn: Transaction): RollbackDecision;
  /** Reason of the Event that records who asked. */
  eventReason: string;
}

export interface RequestValues {
  kubeconfig: string | undefined;
  context: string | undefined;
  namespace: string | undefined;
  reason: string | undefined;
  wait: boolean;
  timeout: string;
}

/** `janus rollback`: a rollback of a Committed transaction, or a retry of a failed rollback. */
export const ROLLBACK_REQUEST: AnnotationRequest = {
  command: 'rollback',
  decide: decideRollback,
  eventReason: 'RollbackRequestedByUser',
};

/** `janus cancel`: stop a transaction in flight and undo what it committed. */
export const CANCEL_REQUEST: AnnotationRequest = {
  command: 'cancel',
  decide: decideCancel,
  eventReason: 'CancelRequestedByUser',
};

/** Who asks and how: the reason they gave, and what they asked with ("janus rollback", "janus ui"). */
export interface Asker {
  reason: string | undefined;
  via: string;
}

/**
 * Decides from the freshest Transaction, sets the annotation (its value the reason) and records
 * who asked as an Event: what `janus rollback`, `janus cancel` and the web view's buttons do
 * alike. A refusal is returned as the decision; the API server's own refusal (RBAC, admission)
 * is thrown as it came.
 */
export async function sendRequest(
  client: KubeClient,
  request: AnnotationRequest,
  namespace: string,
  name: string,
  asker: Asker,
): Promise<{ txn: Transaction; decision: RollbackDecision }> {
  const user = await whoAmI(client);
  const reason = asker.reason || `requested with ${asker.via}${user ? ` by ${user}` : ''}`;
  const { txn, result: decision } = await annotateIf<RollbackDecision>(client, namespace, name, (current) => {
    const decided = request.decide(current);
    return decided.kind === 'request'
      ? { annotate: { [decided.annotation]: reason }, result: decided }
      : { result: decided };
  });
  if (decision.kind === 'request') {
    const events = new EventRecorder(client, { component: 'janus-cli', instance: user ?? 'unknown' });
    await events.record(
      txn,
      'Normal',
      request.eventReason,
      `${reason}${user && asker.reason ? ` (by ${user})` : ''}`,
    );
  }
  return { txn, decision };
}

export async function requestByAnnotation(
  request: AnnotationRequest,
  values: RequestValues,
  args: string[],
): Promise<number> {
  const [name, ...extra] = args;
  if (!name || extra.length > 0) {
    throw new UsageError(`expected exactly one Transaction name: janus ${request.command} <name>`);
  }
  const timeoutMs = parseTimeout(values.timeout);
  const { stderr } = processStreams();
  const cluster = await connect(values, request.command);
  try {
    const { decision } = await sendRequest(cluster.client, request, cluster.namespace, name, {
      reason: values.reason,
      via: `janus ${request.command}`,
    });
    if (decision.kind === 'refused') throw new UsageError(decision.message);
    stderr.write(`${decision.message}\n`);
    if (decision.kind === 'done') return 0;
    if (!values.wait) {
      stderr.write(`Follow it with: janus status ${name} -n ${cluster.namespace} --watch\n`);
      return 0;
    }
    const outcome = await waitForOutcome({
      client: cluster.client,
      namespace: cluster.namespace,
      name,
      timeoutMs,
      progress: stderr,
      outcome: (t) => rollbackOutcome(t, decision.annotation),
    });
    stderr.write(`${outcome.message}\n`);
    return outcome.ok ? 0 : 1;
  } finally {
    await cluster.close();
  }
}

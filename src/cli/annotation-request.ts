/**
 * What `janus rollback` and `janus cancel` share: decide from the freshest Transaction whether
 * to set a one-shot annotation (its value the reason), record who asked as an Event, and with
 * --wait follow the rollback to its end.
 */

import type { Transaction } from '../api/v1alpha1/index.ts';
import { EventRecorder } from '../kube/events.ts';
import { whoAmI } from '../kube/who-am-i.ts';
import { connect } from './cluster.ts';
import { UsageError } from './command.ts';
import { processStreams } from './output.ts';
import { type RollbackDecision, rollbackOutcome } from './rollback-request.ts';
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
    const user = await whoAmI(cluster.client);
    const reason = values.reason || `requested with janus ${request.command}${user ? ` by ${user}` : ''}`;
    const { txn, result: decision } = await annotateIf<RollbackDecision>(
      cluster.client,
      cluster.namespace,
      name,
      (current) => {
        const decided = request.decide(current);
        return decided.kind === 'request'
          ? { annotate: { [decided.annotation]: reason }, result: decided }
          : { result: decided };
      },
    );
    if (decision.kind === 'refused') throw new UsageError(decision.message);
    stderr.write(`${decision.message}\n`);
    if (decision.kind === 'done') return 0;
    if (decision.kind === 'request') {
      const events = new EventRecorder(cluster.client, {
        component: 'janus-cli',
        instance: user ?? 'unknown',
      });
      await events.record(
        txn,
        'Normal',
        request.eventReason,
        `${reason}${user && values.reason ? ` (by ${user})` : ''}`,
      );
    }
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

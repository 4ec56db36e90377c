/** `janus rollback <name>`: asks the controller to undo a Committed transaction (or to finish a failed rollback). */
import { EventRecorder } from '../../kube/events.ts';
import { CLUSTER_FLAGS, connect, whoAmI } from '../cluster.ts';
import { defineCommand, UsageError } from '../command.ts';
import { processStreams } from '../output.ts';
import { decideRollback, type RollbackDecision, rollbackOutcome } from '../rollback-request.ts';
import { annotateIf } from '../transactions.ts';
import { parseTimeout, WAIT_FLAGS, waitForOutcome } from '../wait.ts';

export default defineCommand({
  name: 'rollback',
  usage: 'janus rollback <name> [flags]',
  description: `
Rolls back a Transaction, whatever its age: on a Committed transaction it sets the annotation
tx.janus.io/request-rollback (its value is the --reason); the controller then undoes every
committed change in reverse order, with a fresh deadline. On a Failed transaction whose rollback
did not finish it sets tx.janus.io/retry-rollback instead, so the controller tries once more
(conflicts included: a target someone else changed is still left alone; see janus recover).
The reason and who asked are also recorded as an Event on the Transaction.

A transaction from Git can also be rolled back by adding a file ROLLBACK (its text is the reason)
to its directory: that leaves a trace in Git too.

Exit status: 0 the rollback was requested (with --wait: it ended RolledBack), or there was
nothing to roll back; 1 with --wait, the rollback ended Failed or --timeout passed; 2 usage
error, the Transaction does not exist, or it is still being applied.

Examples:
  janus rollback deploy-v2 -n shop --reason "v2 doubles checkout latency"
  janus rollback deploy-v2 -n shop --wait --timeout 5m`,
  flags: {
    ...CLUSTER_FLAGS,
    reason: {
      type: 'string',
      env: 'JANUS_ROLLBACK_REASON',
      placeholder: 'text',
      description: 'why: stored as the annotation value and in an Event, for the audit trail',
    },
    ...WAIT_FLAGS,
  },
  async run(values, args) {
    const [name, ...extra] = args;
    if (!name || extra.length > 0)
      throw new UsageError('expected exactly one Transaction name: janus rollback <name>');
    const timeoutMs = parseTimeout(values.timeout);
    const { stderr } = processStreams();
    const cluster = await connect(values, 'rollback');
    try {
      const user = await whoAmI(cluster.client);
      const reason = values.reason || `requested with janus rollback${user ? ` by ${user}` : ''}`;
      const { txn, result: decision } = await annotateIf<RollbackDecision>(
        cluster.client,
        cluster.namespace,
        name,
        (current) => {
          const decided = decideRollback(current);
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
          'RollbackRequestedByUser',
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
  },
});

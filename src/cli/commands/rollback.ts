/** `janus rollback <name>`: asks the controller to undo a Committed transaction (or to finish a failed rollback). */
import { ROLLBACK_REQUEST, requestByAnnotation } from '../annotation-request.ts';
import { CLUSTER_FLAGS } from '../cluster.ts';
import { defineCommand } from '../command.ts';
import { WAIT_FLAGS } from '../wait.ts';

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
  run: (values, args) => requestByAnnotation(ROLLBACK_REQUEST, values, args),
});

/** `janus cancel <name>`: stops a transaction in flight and undoes what it committed. */
import { CANCEL_REQUEST, requestByAnnotation } from '../annotation-request.ts';
import { CLUSTER_FLAGS } from '../cluster.ts';
import { defineCommand } from '../command.ts';
import { WAIT_FLAGS } from '../wait.ts';

export default defineCommand({
  name: 'cancel',
  usage: 'janus cancel <name> [flags]',
  description: `
Cancels a Transaction in flight (Pending, Preparing, Committing, or Verifying while its health
gate waits): it sets the annotation tx.janus.io/cancel (its value is the --reason); the
controller stops the transaction at its next step and rolls back, in reverse order, whatever it
had committed, so the cluster ends as it was (RolledBack; with nothing committed yet, nothing to
undo). Unlike argocd app terminate-op, nothing is left half-applied. The reason and who asked
are also recorded as an Event on the Transaction.

A Committed transaction is not in flight: janus rollback undoes it.

Exit status: 0 the cancel was requested (with --wait: it ended RolledBack), or it is already
rolled back or rolling back; 1 with --wait, it ended Failed or --timeout passed; 2 usage error,
the Transaction does not exist, or it has already ended Committed or Failed.

Examples:
  janus cancel deploy-v3 -n shop --reason "wrong image tag"
  janus cancel deploy-v3 -n shop --wait --timeout 5m`,
  flags: {
    ...CLUSTER_FLAGS,
    reason: {
      type: 'string',
      env: 'JANUS_CANCEL_REASON',
      placeholder: 'text',
      description: 'why: stored as the annotation value and in an Event, for the audit trail',
    },
    ...WAIT_FLAGS,
  },
  run: (values, args) => requestByAnnotation(CANCEL_REQUEST, values, args),
});

/** `janus controller`: the saga controller alone, for users who only want the CRD. */
import { runManager } from '../../manager/manager.ts';
import { defineCommand } from '../command.ts';
import { CONTROLLER_FLAGS, managerOptions } from '../controller-settings.ts';

export default defineCommand({
  name: 'controller',
  usage: 'janus controller [flags]',
  description: `
Watches Transaction resources (tx.janus.io/v1alpha1) and drives each through prepare, commit and,
when a change fails, rollback. Transactions created with kubectl run exactly like those from Git.

Uses the current kubeconfig, or the in-cluster configuration inside a pod. With more than one
replica, leader election on a Lease keeps exactly one active; a new leader finishes the
transactions the old one left in flight. SIGTERM finishes the current steps, then exits.

Several installations in one cluster: each started with its own --instance handles only the
Transactions labelled tx.janus.io/instance=<instance> (the one without: those without the label)
and leads under a Lease of its own; see docs/operations.md, Several installations.

Finished Transactions are pruned by the retention policy (--retain-last, --retain-min-age,
--rollback-window; docs/operations.md, Retention); one materialized from Git is kept, since only
janus run knows whether its outcome is on the results branch yet.

Exit status: 0 after a clean shutdown, 1 on a fatal error, 2 on a usage error.`,
  flags: CONTROLLER_FLAGS,
  async run(values) {
    await runManager(managerOptions(values, 'janus-controller'));
    return 0;
  },
});

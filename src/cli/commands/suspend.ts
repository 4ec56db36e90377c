/** `janus suspend`: stop materializing new transaction directories, as `flux suspend source git`. */
import { describeSuspension, suspendAnnotations } from '../../gitops/git-control.ts';
import { whoAmI } from '../../kube/who-am-i.ts';
import { defineCommand } from '../command.ts';
import { describeSource, GIT_SIDE_FLAGS, withGitSide } from '../git-side-control.ts';

export default defineCommand({
  name: 'suspend',
  usage: 'janus suspend [flags]',
  description: `
Suspends the Git side of janus run: it stops polling the watched branch, so no new transaction
directory (and no new ROLLBACK file) is acted on until janus resume. Transactions already in the
cluster go on to their end, and their outcomes are still committed to the results branch; nothing
that lands on the branch meanwhile is lost: the first poll after janus resume reads it, in commit
order.

The suspension is the annotation tx.janus.io/suspend on the Git side's ConfigMap in the
controller namespace (with the reason, the time and who asked), so it outlives restarts and
holds for every replica; /readyz shows it on its git-reachable line, janus status above its table,
and the metric janus_git_suspended is 1.

Exit status: 0 suspended (or already suspended); 2 usage error, or no Git side found in the
controller namespace.

Examples:
  janus suspend --reason "change freeze until Monday"
  kubectl get configmap -n janus-system -l app.kubernetes.io/component=git-control -o yaml`,
  flags: {
    ...GIT_SIDE_FLAGS,
    reason: {
      type: 'string',
      env: 'JANUS_SUSPEND_REASON',
      placeholder: 'text',
      description: 'why: kept with the suspension and shown wherever it is',
    },
  },
  run: (values, args) =>
    withGitSide('suspend', values, args, async (session) => {
      const current = session.state.suspended;
      if (current) {
        session.say(
          `the Git side of ${describeSource(session.state)} is already ${describeSuspension(current)}`,
        );
        session.print(session.state);
        return 0;
      }
      const user = await whoAmI(session.cluster.client);
      const state = await session.annotate(suspendAnnotations(values.reason, user, new Date()));
      session.say(
        `the Git side of ${describeSource(state)} is ${describeSuspension(state.suspended ?? {})}: no new transaction directory is applied until janus resume`,
      );
      session.print(state);
      return 0;
    }),
});

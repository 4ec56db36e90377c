/** `janus poll`: poll the watched branch now, as `flux reconcile source git` does. */
import { describeSuspension } from '../../gitops/git-control.ts';
import { defineCommand } from '../command.ts';
import {
  describeSource,
  GIT_SIDE_FLAGS,
  POLL_WAIT_FLAGS,
  requestPoll,
  withGitSide,
} from '../git-side-control.ts';

export default defineCommand({
  name: 'poll',
  usage: 'janus poll [flags]',
  description: `
Asks the running janus run to poll its watched branch now, without waiting for the next interval
or a webhook (as flux reconcile source git does), and waits for the answer: the commit it read
and what it did (new transactions materialized, directories rejected, or nothing new).

It sets the annotation tx.janus.io/poll-requested-at on the Git side's ConfigMap
(janus-git-control-<hash>, label app.kubernetes.io/component=git-control) in the controller
namespace; the leader watches it and records its answer there. Who may patch that ConfigMap
may ask for polls; polls are idempotent.

Exit status: 0 the poll succeeded (with --no-wait: it was requested); 1 the poll failed, the
Git side is suspended (janus resume first), or no answer came within --timeout; 2 usage error, or
no Git side found in the controller namespace.

Examples:
  janus poll
  janus poll --timeout 30s -o json`,
  flags: { ...GIT_SIDE_FLAGS, ...POLL_WAIT_FLAGS },
  run: (values, args) =>
    withGitSide('poll', values, args, async (session) => {
      if (session.state.suspended) {
        session.say(
          `the Git side of ${describeSource(session.state)} is ${describeSuspension(session.state.suspended)}; it does not poll until janus resume`,
        );
        session.print(session.state);
        return 1;
      }
      return requestPoll(session, values);
    }),
});

/** `janus resume`: undo janus suspend and poll at once, as `flux resume source git`. */
import { RESUME_ANNOTATIONS } from '../../gitops/git-control.ts';
import { defineCommand } from '../command.ts';
import {
  describeSource,
  GIT_SIDE_FLAGS,
  POLL_WAIT_FLAGS,
  requestPoll,
  withGitSide,
} from '../git-side-control.ts';

export default defineCommand({
  name: 'resume',
  usage: 'janus resume [flags]',
  description: `
Resumes the Git side after janus suspend: removes the suspension from its ConfigMap and asks for
a poll at once, then waits for it (as janus poll does): what landed on the watched branch while
suspended is materialized now, in commit order.

Exit status: 0 resumed and the poll succeeded (with --no-wait: resumed); 1 the poll failed or no
answer came within --timeout (the Git side is resumed all the same); 2 usage error, or no Git
side found in the controller namespace.

Examples:
  janus resume
  janus resume --no-wait`,
  flags: { ...GIT_SIDE_FLAGS, ...POLL_WAIT_FLAGS },
  run: (values, args) =>
    withGitSide('resume', values, args, async (session) => {
      const suspended = session.state.suspended !== undefined;
      session.say(
        suspended
          ? `the Git side of ${describeSource(session.state)} is resumed`
          : `the Git side of ${describeSource(session.state)} is not suspended`,
      );
      return requestPoll(session, values, suspended ? RESUME_ANNOTATIONS : {});
    }),
});

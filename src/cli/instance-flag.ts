/** --instance of janus run and janus controller: which Transactions this installation handles. */
import { instanceOf, instanceProblem } from '../controller/installation.ts';
import { type Flags, UsageError } from './command.ts';

export const INSTANCE_FLAG = {
  instance: {
    type: 'string',
    env: 'JANUS_INSTANCE',
    placeholder: 'name',
    description:
      'handle only Transactions labelled tx.janus.io/instance=<name>, for several installations in one cluster (default: only those without the label; docs/operations.md, Several installations)',
  },
} as const satisfies Flags;

/** The installation's instance (--instance), checked; undefined for the default installation. */
export function instanceFlag(value: string | undefined): string | undefined {
  const instance = instanceOf(value);
  const problem = instance === undefined ? undefined : instanceProblem(instance);
  if (problem) throw new UsageError(`--instance: ${problem}`);
  return instance;
}

/** `janus wait <name>`: for CI jobs of merge-to-apply pipelines, the outcome as an exit status. */
import { isTerminal, type Transaction } from '../../api/v1alpha1/index.ts';
import { CLUSTER_FLAGS, connect } from '../cluster.ts';
import { defineCommand, UsageError } from '../command.ts';
import { formatDocument, OUTPUT_FLAG, parseOutput, processStreams } from '../output.ts';
import { parseTimeout, WAIT_FLAGS, waitForOutcome } from '../wait.ts';

interface Outcome {
  namespace: string;
  name: string;
  /** Committed, RolledBack, Failed, or Deleted (gone while waited for). */
  phase: string;
  reason: string;
  message: string;
  progress: string;
}

export default defineCommand({
  name: 'wait',
  usage: 'janus wait <name> [flags]',
  description: `
Waits until a Transaction has finished and says how, for CI jobs of merge-to-apply pipelines:
exit 0 when it is Committed, 1 when it ended any other way (RolledBack, Failed, deleted) or
--timeout passed. It never waits on a transaction that has already finished, whichever way.
A Transaction that does not exist yet (a merge the Git side has not materialized) is waited for
until it appears. Each phase it passes is printed on stderr; -o json|yaml prints the outcome.

Exit status: 0 Committed; 1 RolledBack, Failed, deleted, or --timeout passed; 2 usage error.

Examples:
  janus wait deploy-v2 -n shop --timeout 10m
  janus wait deploy-v2 -n shop -o json | jq -r .message`,
  flags: {
    ...CLUSTER_FLAGS,
    timeout: { ...WAIT_FLAGS.timeout, description: 'how long to wait before giving up (exit 1)' },
    ...OUTPUT_FLAG,
  },
  async run(values, args) {
    const [name, ...extra] = args;
    if (!name || extra.length > 0)
      throw new UsageError('expected exactly one Transaction name: janus wait <name>');
    const timeoutMs = parseTimeout(values.timeout);
    if (timeoutMs <= 0) throw new UsageError(`--timeout ${values.timeout}: must be more than 0s`);
    const format = parseOutput(values.output, ['json', 'yaml'] as const);
    const { stdout, stderr } = processStreams();
    const cluster = await connect(values, 'wait');
    try {
      let seen = false;
      const outcome = await waitForOutcome<Outcome>({
        client: cluster.client,
        namespace: cluster.namespace,
        name,
        timeoutMs,
        progress: stderr,
        outcome: (txn) => {
          if (txn) seen = true;
          else if (seen) return deleted(cluster.namespace, name);
          return txn && isTerminal(txn.status?.phase) ? outcomeOf(txn) : undefined;
        },
      });
      stderr.write(`${outcome.namespace}/${outcome.name}: ${outcome.phase}: ${outcome.message}\n`);
      if (format) stdout.write(formatDocument(outcome, format));
      return outcome.phase === 'Committed' ? 0 : 1;
    } finally {
      await cluster.close();
    }
  },
});

function outcomeOf(txn: Transaction): Outcome {
  const ready = txn.status?.conditions?.find((c) => c.type === 'Ready');
  return {
    namespace: txn.metadata.namespace ?? '',
    name: txn.metadata.name,
    phase: txn.status?.phase ?? 'Pending',
    reason: ready?.reason ?? '',
    message: ready?.message ?? '',
    progress: txn.status?.progress ?? '',
  };
}

function deleted(namespace: string, name: string): Outcome {
  return {
    namespace,
    name,
    phase: 'Deleted',
    reason: 'Deleted',
    message: 'the Transaction was deleted before it finished',
    progress: '',
  };
}

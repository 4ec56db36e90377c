/** `janus trace <type>/<name>`: which transaction, and which Git commit, last changed a cluster object. */
import type { Transaction } from '../../api/v1alpha1/index.ts';
import { isNotFound } from '../../kube/errors.ts';
import { CLUSTER_FLAGS, connect } from '../cluster.ts';
import { defineCommand, UsageError } from '../command.ts';
import { formatDocument, OUTPUT_FLAG, parseOutput, processStreams } from '../output.ts';
import { resolveResource } from '../resource-arg.ts';
import { renderTrace, traceReport } from '../trace-view.ts';
import { getTransaction } from '../transactions.ts';

/** Exit status of a stamp that cannot be checked: its Transaction is gone or has another uid. */
const UNVERIFIED_EXIT = 3;

export default defineCommand({
  name: 'trace',
  usage: 'janus trace <type>/<name> [flags]',
  description: `
Traces a cluster object back to the Transaction that last wrote it and to that transaction's Git
commit and directory: every object a transaction creates, updates or patches carries the
annotation tx.janus.io/applied-by (<namespace>/<name>@<uid>#<change>). The type is what kubectl
takes: a kind, plural or short name, optionally with its group (deployment.apps/web).

Anyone who may write the object may write its annotations, so a stamp is believed only when the
Transaction it names still exists with the stamp's uid and its named change targets this very
object. A stamp whose Transaction was deleted (or pruned) since, or re-created under the same name,
cannot be checked: it is reported as such, with the file that would record its outcome on the
results branch (git show janus/results:results/<namespace>/<name>.yaml; compare its uid).

Exit status: 0 the object was traced to a transaction; 1 no transaction's stamp is on it, or one
that is refused (its change targets another object); 2 usage error, or the object does not exist;
3 the stamp cannot be checked (its Transaction is gone, or has another uid).

Examples:
  janus trace deployment/web -n shop
  janus trace configmap/app-config -n shop -o json | jq -r .appliedBy.source.revision`,
  flags: { ...CLUSTER_FLAGS, ...OUTPUT_FLAG },
  async run(values, args) {
    const [arg, ...extra] = args;
    if (!arg || extra.length > 0)
      throw new UsageError('expected exactly one object: janus trace <type>/<name>');
    const format = parseOutput(values.output, ['json', 'yaml'] as const);
    const { stdout, stderr } = processStreams();
    const cluster = await connect(values, 'trace');
    try {
      const resolved = await resolveResource(cluster.client, arg);
      const ref = { ...resolved.ref, ...(resolved.namespaced && { namespace: cluster.namespace }) };
      const object = await cluster.objects.find(ref);
      if (!object) {
        throw new UsageError(
          `${ref.kind} ${resolved.namespaced ? `${cluster.namespace}/` : ''}${ref.name} not found`,
        );
      }
      const stamp = traceReport(object, undefined).appliedBy;
      let txn: Transaction | undefined;
      if (stamp) {
        txn = await getTransaction(cluster.client, stamp.namespace, stamp.name).catch((e: unknown) => {
          if (e instanceof UsageError || isNotFound(e)) return undefined; // gone: the results branch has it
          throw e;
        });
      }
      const report = traceReport(object, txn);
      stderr.write(renderTrace(report));
      if (format) stdout.write(formatDocument(report, format));
      return report.unverified ? UNVERIFIED_EXIT : report.appliedBy ? 0 : 1;
    } finally {
      await cluster.close();
    }
  },
});

/** `janus recover <name>`: inspect, and on request restore, what a failed rollback left standing. */
import { acceptance, leavesWork, REQUEST_ANNOTATIONS } from '../../api/requests.ts';
import type { Transaction } from '../../api/v1alpha1/index.ts';
import { restore } from '../../changes/restore.ts';
import { isNotFound } from '../../kube/errors.ts';
import { EventRecorder } from '../../kube/events.ts';
import { whoAmI } from '../../kube/who-am-i.ts';
import { RollbackStore } from '../../rollback-store/store.ts';
import { serviceAccountUser } from '../../saga/targets.ts';
import { CLUSTER_FLAGS, type Cluster, connect } from '../cluster.ts';
import { defineCommand, UsageError } from '../command.ts';
import { formatDocument, OUTPUT_FLAG, parseOutput, processStreams, type Streams } from '../output.ts';
import { type InspectedItem, inspectItem, otherLockHolder } from '../recover-items.ts';
import { describeOperation, parseSelection, standingItems } from '../recover-plan.ts';
import { rollbackOutcome } from '../rollback-request.ts';
import { annotateIf, getTransaction } from '../transactions.ts';
import { liveLeases, unlock } from '../unlock.ts';
import { parseTimeout, WAIT_FLAGS, waitForOutcome } from '../wait.ts';

export default defineCommand({
  name: 'recover',
  usage: 'janus recover <name> [--apply <change>|all] [flags]',
  description: `
For a Failed transaction whose rollback could not undo everything. When someone else changed a
target after the transaction committed, the rollback leaves that target alone (a conflict)
rather than overwrite their work. This command shows, for each change left standing, the
difference between the current object and its prior state from the rollback store (before the
transaction), with Secret values masked. Without --apply it changes nothing.

--apply <change>[,<change>...] or --apply all deliberately restores the prior state over the
current object for those conflicts: the whole object is replaced by its prior state (re-created
if it was deleted, deleted if the transaction had created it), so the other writer's change is
discarded as the diff shows. The write runs as the transaction's ServiceAccount, through
impersonation (you need the "impersonate" verb on it), and only if the object is still exactly
what was shown. Then tx.janus.io/retry-rollback is set (you need "patch" on transactions), so
the controller finishes the rollback: it finds the restored targets as they were before the
transaction and records them rolled back, RolledBack once nothing is left standing. Recover
never writes the Transaction's status. A change whose undo was refused for another reason
(RBAC, admission) is not a conflict: fix the cause and run janus rollback.

--unlock opens, in any phase, the objects the transaction still holds when no controller will
ever release them (Janus uninstalled, or its controller stopped for good): while a transaction
holds a target the API server refuses everyone else's writes to it (docs/security.md, "Locks
that block"), and nothing but the controller removes that. It removes the transaction's entries
from the LockTables of its targets' namespaces (and of the controller namespace, for
cluster-scoped targets), and only while none of its Leases is renewed: a live controller renews
them every lockTimeout/3 (wait for the transaction to end, or janus cancel it). You need patch
on locktables.tx.janus.io there: an administrator. The Transaction itself is left as it is.

Exit status: 0 shown, every chosen change restored, or the objects opened; 1 a chosen change
could not be restored, with --wait the transaction did not end RolledBack, or --unlock refused
(a Lease still renewed) or not allowed; 2 usage error, the Transaction does not exist, or it is
not Failed.

Examples:
  janus recover deploy-v2 -n shop
  janus recover deploy-v2 -n shop --apply 1 --wait
  janus recover deploy-v2 -n shop -o yaml     # the same report, machine-readable
  janus recover deploy-v2 -n shop --unlock    # its controller is gone: open what it holds`,
  flags: {
    ...CLUSTER_FLAGS,
    apply: {
      type: 'string',
      env: 'JANUS_RECOVER_APPLY',
      placeholder: 'change|all',
      description: 'restore these conflicts (change numbers as shown, comma-separated, or "all")',
    },
    unlock: {
      type: 'boolean',
      env: 'JANUS_RECOVER_UNLOCK',
      description: 'open the objects the transaction holds, its controller gone for good (see above)',
    },
    ...WAIT_FLAGS,
    ...OUTPUT_FLAG,
  },
  async run(values, args) {
    const [name, ...extra] = args;
    if (!name || extra.length > 0)
      throw new UsageError('expected exactly one Transaction name: janus recover <name>');
    const format = parseOutput(values.output, ['json', 'yaml'] as const);
    const timeoutMs = parseTimeout(values.timeout);
    const streams = processStreams();
    const cluster = await connect(values, 'recover');
    try {
      const txn = await getTransaction(cluster.client, cluster.namespace, name);
      if (values.unlock) {
        if (values.apply !== undefined) throw new UsageError('--unlock and --apply do not go together');
        return await openLocked(cluster, txn, streams);
      }
      requireFailed(txn);
      const standing = standingItems(txn);
      const selection = values.apply === undefined ? [] : parseSelection(values.apply, standing);
      if (standing.length === 0) {
        streams.stderr.write(`${cluster.namespace}/${name}: no committed change is left standing.\n`);
        return 0;
      }
      const asServiceAccount = cluster.objects.as(serviceAccountUser(txn));
      const store = await openStore(cluster, txn);
      const inspected: InspectedItem[] = [];
      for (const item of standing) inspected.push(await inspectItem(item, txn, asServiceAccount, store));
      report(streams, txn, inspected, format, values.apply === undefined);
      if (selection.length === 0) return 0;

      const restored = await restoreSelected(cluster, txn, inspected, selection, streams);
      if (restored.length === 0) return 1;
      const user = await whoAmI(cluster.client);
      await askToFinish(cluster, txn, restored, user);
      const failed = selection.length - restored.length;
      if (!values.wait) {
        streams.stderr.write(
          `The controller now finishes the rollback. Follow it: janus status ${name} -n ${cluster.namespace} --watch\n`,
        );
        return failed > 0 ? 1 : 0;
      }
      const outcome = await waitForOutcome({
        client: cluster.client,
        namespace: cluster.namespace,
        name,
        timeoutMs,
        progress: streams.stderr,
        outcome: (t) => rollbackOutcome(t, REQUEST_ANNOTATIONS['retry-rollback']),
      });
      streams.stderr.write(`${outcome.message}\n`);
      return outcome.ok && failed === 0 ? 0 : 1;
    } finally {
      await cluster.close();
    }
  },
});

/** --unlock: the transaction's LockTable entries removed, unless a live controller holds its Leases. */
async function openLocked(cluster: Cluster, txn: Transaction, streams: Streams): Promise<number> {
  const id = `${txn.metadata.namespace}/${txn.metadata.name}`;
  const live = await liveLeases(cluster.client, txn);
  if (live.length > 0) {
    streams.stderr.write(
      `${id}: not unlocked: a controller still renews its locks (${live.join('; ')}); it releases them when the transaction ends (janus cancel ${txn.metadata.name} -n ${txn.metadata.namespace} ends it sooner)\n`,
    );
    return 1;
  }
  const { opened, forbidden } = await unlock(cluster.client, txn);
  if (opened.length > 0)
    streams.stderr.write(`${id}: every object it held is open again (LockTables of ${opened.join(', ')})\n`);
  else if (forbidden.length === 0) streams.stderr.write(`${id}: it holds no lock\n`);
  if (forbidden.length > 0) {
    streams.stderr.write(
      `${id}: not unlocked in ${forbidden.join(', ')}: you may not patch locktables.tx.janus.io there\n`,
    );
    return 1;
  }
  return 0;
}

function requireFailed(txn: Transaction): void {
  const phase = txn.status?.phase ?? 'Pending';
  if (phase === 'Failed') return;
  const id = `${txn.metadata.namespace}/${txn.metadata.name}`;
  const advice: Record<string, string> = {
    Committed: 'to undo it, use janus rollback',
    RolledBack: 'every committed change was already undone',
    RollingBack: 'its rollback is running; wait for it to end',
  };
  throw new UsageError(
    `${id} is ${phase}: janus recover is for Failed transactions; ${advice[phase] ?? 'it is still being applied'}`,
  );
}

async function openStore(cluster: Cluster, txn: Transaction) {
  try {
    return await new RollbackStore(cluster.client).open(txn);
  } catch (e) {
    if (!isNotFound(e)) throw e;
    throw new UsageError(
      `the rollback store ${txn.metadata.namespace}/${txn.status?.rollbackRef ?? `${txn.metadata.name}-rollback`} is missing: the prior states are lost`,
      1,
    );
  }
}

function report(
  streams: Streams,
  txn: Transaction,
  items: readonly InspectedItem[],
  format: 'json' | 'yaml' | undefined,
  showHint: boolean,
): void {
  if (format) {
    const document = {
      transaction: { namespace: txn.metadata.namespace, name: txn.metadata.name },
      phase: txn.status?.phase,
      standing: items.map((i) => ({
        change: i.index,
        type: i.type,
        target: i.description,
        conflict: i.conflict,
        error: i.error,
        restore: i.operation.op,
        diff: i.diff,
      })),
    };
    streams.stdout.write(formatDocument(document, format));
    return;
  }
  const out = streams.stderr;
  out.write(
    `${txn.metadata.namespace}/${txn.metadata.name}: ${items.length} committed change(s) left standing by the rollback\n`,
  );
  for (const item of items) {
    out.write(
      `\n[${item.index}] ${item.type} ${item.description}: ${item.conflict ? 'CONFLICT' : 'undo refused'}\n`,
    );
    if (item.error) out.write(`    ${item.error}\n`);
    if (!item.conflict) {
      out.write('    Not restorable here: fix the cause of the refusal, then run janus rollback to retry.\n');
      continue;
    }
    out.write(`    Restoring would ${describeOperation(item.operation)}.\n`);
    out.write(item.diff ? `${item.diff}` : '    (no difference: it already matches its prior state)\n');
  }
  const conflicts = items.filter((i) => i.conflict).map((i) => i.index);
  if (showHint && conflicts.length > 0) {
    out.write(
      `\nTo restore: janus recover ${txn.metadata.name} -n ${txn.metadata.namespace} --apply ${conflicts.join(',')}` +
        `   (as ${serviceAccountUser(txn)})\n`,
    );
  }
}

async function restoreSelected(
  cluster: Cluster,
  txn: Transaction,
  items: readonly InspectedItem[],
  selection: readonly number[],
  streams: Streams,
): Promise<number[]> {
  const asServiceAccount = cluster.objects.as(serviceAccountUser(txn));
  const restored: number[] = [];
  streams.stderr.write('\n');
  for (const index of selection) {
    const item = items.find((i) => i.index === index);
    if (!item) continue;
    const holder = await otherLockHolder(cluster.client, item, txn);
    if (holder) {
      streams.stderr.write(`[${index}] not restored: another transaction holds its lock: ${holder}\n`);
      continue;
    }
    const result = await restore(asServiceAccount, item.ref, item.operation);
    if (result.ok) {
      restored.push(index);
      streams.stderr.write(`[${index}] restored: ${item.description}\n`);
    } else {
      streams.stderr.write(`[${index}] not restored: ${result.message}\n`);
    }
  }
  return restored;
}

/**
 * Records who restored what as an Event, then asks the controller to finish the rollback with a
 * retry-rollback request: the controller, the only writer of the status, undoes the remaining
 * changes again and finds the restored ones already as they were before the transaction. A
 * request that must wait (a rollback is running) is left for the controller to take at its end.
 */
async function askToFinish(
  cluster: Cluster,
  txn: Transaction,
  indices: number[],
  user: string | undefined,
): Promise<void> {
  const by = `janus recover${user ? ` by ${user}` : ''}`;
  const events = new EventRecorder(cluster.client, { component: 'janus-cli', instance: user ?? 'unknown' });
  await events.record(
    txn,
    'Normal',
    'RecoveredByHand',
    `changes ${indices.join(', ')} restored to their prior state (${by})`,
  );
  const annotation = REQUEST_ANNOTATIONS['retry-rollback'];
  const { result: refusal } = await annotateIf(
    cluster.client,
    txn.metadata.namespace ?? '',
    txn.metadata.name,
    (current) => {
      const { verdict, message } = acceptance('retry-rollback', current);
      if (!leavesWork(verdict, true)) return { result: message };
      const asked = annotation in (current.metadata.annotations ?? {});
      return { ...(!asked && { annotate: { [annotation]: by } }), result: undefined };
    },
  );
  if (refusal !== undefined) {
    // The targets are restored; only the request is missing, and the controller would not take it now.
    throw new UsageError(
      `changes ${indices.join(', ')} were restored, but the controller was not asked to finish the rollback: ${refusal}`,
      1,
    );
  }
}

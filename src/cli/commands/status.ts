/** `janus status [name]`: the Transactions of a namespace, or one of them in detail; optionally live. */
import { API_VERSION, SOURCE_PLURAL, type Source, type Transaction } from '../../api/v1alpha1/index.ts';
import { describeSuspension, GIT_CONTROL_SELECTOR, gitSideStateOf } from '../../gitops/git-control.ts';
import { DEFAULT_CONTROLLER_NAMESPACE } from '../../gitops/policy.ts';
import type { KubeClient } from '../../kube/client.ts';
import { isForbidden, isNotFound } from '../../kube/errors.ts';
import { printable } from '../../text/printable.ts';
import { CLUSTER_FLAGS, type Cluster, connect } from '../cluster.ts';
import { defineCommand, UsageError } from '../command.ts';
import { describeSource } from '../git-side-control.ts';
import { onInterrupt } from '../interrupt.ts';
import { changedTransactions, LiveView } from '../live-view.ts';
import {
  formatDocument,
  OUTPUT_FLAG,
  type OutputFormat,
  parseOutput,
  processStreams,
  type Streams,
} from '../output.ts';
import { renderSourceDriftTable } from '../source-drift-view.ts';
import {
  recentEvents,
  renderTransactionDetail,
  renderTransactionTable,
  TABLE_HEADER,
  type TransactionEvent,
  transactionRow,
} from '../status-view.ts';
import { renderTable } from '../table.ts';
import { getTransaction, listTransactions, observeTransactions } from '../transactions.ts';

const MAX_EVENTS = 15;

export const STATUS_FLAGS = {
  ...CLUSTER_FLAGS,
  'all-namespaces': {
    type: 'boolean',
    short: 'A',
    env: 'JANUS_ALL_NAMESPACES',
    description: 'list Transactions in every namespace',
  },
  watch: {
    type: 'boolean',
    short: 'w',
    env: 'JANUS_WATCH',
    description: 'keep running and show every change as it happens (Ctrl-C to stop)',
  },
  'controller-namespace': {
    type: 'string',
    env: 'JANUS_CONTROLLER_NAMESPACE',
    default: DEFAULT_CONTROLLER_NAMESPACE,
    placeholder: 'namespace',
    description: 'where janus run runs: the table says so above it when its Git side is suspended',
  },
  ...OUTPUT_FLAG,
} as const;

interface View {
  cluster: Cluster;
  namespace: string | undefined;
  name: string | undefined;
  format: OutputFormat | undefined;
  streams: Streams;
  controllerNamespace: string;
}

export default defineCommand({
  name: 'status',
  usage: 'janus status [name] [flags]',
  description: `
Without a name, lists the Transactions of the namespace (-A: of every namespace) with their phase,
committed/total changes, age, and the reason of their Ready condition, under a line saying so when
the Git side of janus run is suspended (janus suspend); then the Sources of the namespace with their
drift: how many objects differ, when last checked, the drift correction in flight or how the last
one ended, and when the next may run (after failed ones, the backoff). With a name, shows that
Transaction in detail: where it came from, each change and its outcome (pending, prepared,
committed, rolled-back, conflict, failed) with its error, the conditions, the latest Events, and
what to do next (janus rollback, janus recover).

--watch keeps running and shows every change as the API server reports it (a watch, not polling):
in a terminal the view is redrawn in place; in a pipe each change is appended.
-o json|yaml prints the Transaction objects on stdout instead (with --watch, one per change).

Exit status: 0 shown; 1 the API server could not be reached or refused; 2 usage error, or the
named Transaction does not exist.

Examples:
  janus status -n shop
  janus status deploy-v2 -n shop --watch
  janus status -A -o json | jq -r '.items[] | select(.status.phase == "Failed") | .metadata.name'`,
  flags: STATUS_FLAGS,
  async run(values, args) {
    if (args.length > 1) throw new UsageError(`expected at most one Transaction name, got ${args.length}`);
    const name = args[0];
    if (name && values['all-namespaces'])
      throw new UsageError('a name and --all-namespaces do not go together');
    const format = parseOutput(values.output, ['json', 'yaml'] as const);
    const cluster = await connect(values, 'status');
    const view: View = {
      cluster,
      namespace: values['all-namespaces'] ? undefined : cluster.namespace,
      name,
      format,
      streams: processStreams(),
      controllerNamespace: values['controller-namespace'],
    };
    try {
      if (values.watch) await watch(view);
      else await showOnce(view);
      return 0;
    } finally {
      await cluster.close();
    }
  },
});

const scopeText = (namespace: string | undefined) =>
  namespace ? `in namespace ${namespace}` : 'in any namespace';

async function showOnce(view: View): Promise<void> {
  const { cluster, namespace, name, format, streams } = view;
  if (name) {
    const txn = await getTransaction(cluster.client, cluster.namespace, name);
    if (format) streams.stdout.write(formatDocument(txn, format));
    else streams.stderr.write(renderTransactionDetail(txn, await eventsOf(cluster.client, txn), Date.now()));
    return;
  }
  const list = await listTransactions(cluster.client, namespace);
  if (format)
    streams.stdout.write(formatDocument({ apiVersion: 'v1', kind: 'List', items: list.items }, format));
  else {
    for (const line of await suspendedGitSides(view)) streams.stderr.write(`${printable(line)}\n`);
    streams.stderr.write(renderTransactionTable(list.items, Date.now(), scopeText(namespace)));
    streams.stderr.write(renderSourceDriftTable(await sourcesOf(cluster.client, namespace), Date.now()));
  }
}

/** The scope's Sources (undefined: every namespace); none without the Source CRD or the right to list them. */
async function sourcesOf(client: KubeClient, namespace: string | undefined): Promise<Source[]> {
  const api = `/apis/${API_VERSION}`;
  try {
    const list = await client.request<{ items: Source[] }>({
      method: 'GET',
      path: namespace ? `${api}/namespaces/${namespace}/${SOURCE_PLURAL}` : `${api}/${SOURCE_PLURAL}`,
    });
    return [...list.items].sort(
      (a, b) =>
        (a.metadata.namespace ?? '').localeCompare(b.metadata.namespace ?? '') ||
        a.metadata.name.localeCompare(b.metadata.name),
    );
  } catch (e) {
    if (isForbidden(e) || isNotFound(e)) return [];
    throw e;
  }
}

/** "Git side of <repo> is suspended since …", one line each; none when we may not read them. */
async function suspendedGitSides(view: View): Promise<string[]> {
  try {
    const list = await view.cluster.objects.list('v1', 'ConfigMap', view.controllerNamespace, {
      labelSelector: GIT_CONTROL_SELECTOR,
    });
    return list.items.flatMap((object) => {
      const state = gitSideStateOf(object);
      return state.suspended
        ? [`Git side of ${describeSource(state)} is ${describeSuspension(state.suspended)} (janus resume)`]
        : [];
    });
  } catch (e) {
    if (isForbidden(e) || isNotFound(e)) return [];
    throw e;
  }
}

async function watch(view: View): Promise<void> {
  const { cluster, name, format, streams } = view;
  const namespace = name ? cluster.namespace : view.namespace;
  // A missing name is an error, as without --watch.
  if (name) await getTransaction(cluster.client, cluster.namespace, name);
  const interrupt = onInterrupt();
  const live = new LiveView(streams.stderr, streams.stderr.isTTY === true);
  let seen = new Map<string, string>();
  let first = true;
  try {
    for await (const snapshot of observeTransactions(cluster.client, { namespace, name }, interrupt.signal)) {
      const diff = changedTransactions(seen, snapshot);
      seen = diff.seen;
      if (format) {
        for (const txn of diff.changed) streams.stdout.write(formatDocument(txn, format));
      } else if (name) {
        await showDetail(view, live, snapshot[0], first);
      } else if (streams.stderr.isTTY) {
        live.show(renderTransactionTable(snapshot, Date.now(), scopeText(namespace)));
      } else {
        appendRows(streams, diff.changed, first);
      }
      first = false;
    }
  } finally {
    interrupt.dispose();
  }
}

async function showDetail(
  view: View,
  live: LiveView,
  txn: Transaction | undefined,
  first: boolean,
): Promise<void> {
  if (!txn) {
    live.show(`Transaction ${view.cluster.namespace}/${view.name} was deleted.\n`);
    return;
  }
  const text = renderTransactionDetail(txn, await eventsOf(view.cluster.client, txn), Date.now());
  live.show(view.streams.stderr.isTTY ? text : `${first ? '' : '\n'}${text}`);
}

/** Outside a terminal: the header once, then one row per Transaction that changed. */
function appendRows(streams: Streams, changed: readonly Transaction[], first: boolean): void {
  const rows = changed.map((t) => transactionRow(t, Date.now()));
  const table = renderTable(TABLE_HEADER, rows);
  streams.stderr.write(first ? table : table.slice(table.indexOf('\n') + 1));
}

/** The Transaction's Events, newest last; none when we may not read Events. */
async function eventsOf(client: KubeClient, txn: Transaction): Promise<TransactionEvent[]> {
  try {
    const list = await client.request<{ items: TransactionEvent[] }>({
      method: 'GET',
      path: `/api/v1/namespaces/${txn.metadata.namespace}/events`,
      query: { fieldSelector: `involvedObject.uid=${txn.metadata.uid}` },
    });
    return recentEvents(list.items, MAX_EVENTS);
  } catch (e) {
    if (isForbidden(e)) return [];
    throw e;
  }
}

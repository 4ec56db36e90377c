/**
 * The `Source` objects (tx.janus.io/v1alpha1, docs/sources.md "The Source object") beside the
 * Transactions: one row each, as `kubectl get sources` prints them, watched with the user's
 * credentials for as long as the page shows them. A cluster without the Source CRD (or a user
 * who may not list them) just says so.
 */
import { API_VERSION, SOURCE_PLURAL, type Source } from '../api/v1alpha1/index.ts';
import type { KubeClient } from '../kube/client.ts';
import { isNotFound } from '../kube/errors.ts';
import { errorText } from '../log/describe-error.ts';
import { Informer } from '../runtime/informer.ts';
import { dropManagedFields } from '../runtime/watch-stream.ts';
import type { EventStream } from './sse.ts';

export interface SourceRow {
  key: string;
  namespace: string;
  name: string;
  /** How it renders: kustomize, helm or plain, and the path. */
  render: string;
  /** The commit last applied, and the transaction that applied it. */
  applied?: { commit: string; transaction?: string; at?: string };
  /** The commit last tried, and how it ended. */
  attempted?: { commit: string; transaction?: string; outcome?: string; reason?: string };
  /** "None", or how many objects drifted. */
  drift: string;
  /** Objects in its inventory. */
  objects: number;
  ready?: { status: string; reason: string; message: string };
  created: string | undefined;
}

export function sourceRow(source: Source): SourceRow {
  const { spec, status = {} } = source;
  const { lastApplied: applied, lastAttempted: attempted, drift } = status;
  const ready = status.conditions?.find((c) => c.type === 'Ready');
  const how = spec.helm ? 'helm' : spec.kustomize ? 'kustomize' : 'plain';
  return {
    key: `${source.metadata.namespace}/${source.metadata.name}`,
    namespace: source.metadata.namespace ?? '',
    name: source.metadata.name,
    render: `${how} ${spec.path}`,
    ...(applied?.revision && {
      applied: {
        commit: applied.revision,
        ...(applied.transaction && { transaction: applied.transaction }),
        ...(applied.time && { at: applied.time }),
      },
    }),
    ...(attempted?.revision && {
      attempted: {
        commit: attempted.revision,
        ...(attempted.transaction && { transaction: attempted.transaction }),
        ...(attempted.outcome && { outcome: attempted.outcome }),
        ...(attempted.reason && { reason: attempted.reason }),
      },
    }),
    drift: drift?.count ? `${drift.count} object(s)` : 'None',
    objects: status.inventory?.length ?? 0,
    ...(ready && { ready: { status: ready.status, reason: ready.reason, message: ready.message ?? '' } }),
    created: source.metadata.creationTimestamp,
  };
}

const SOURCES_API = `/apis/${API_VERSION}`;

/** Streams the scope's Sources ('' every namespace) to the page until it goes. */
export function streamSources(client: KubeClient, scope: string, stream: EventStream): void {
  const informer = new Informer<Source>({
    client,
    path: scope ? `${SOURCES_API}/namespaces/${scope}/${SOURCE_PLURAL}` : `${SOURCES_API}/${SOURCE_PLURAL}`,
    transform: dropManagedFields,
    resyncPeriodMs: 0,
    handlers: {
      onAdd: (s) => synced && stream.send('upsert', sourceRow(s)),
      onUpdate: (_old, s) => synced && stream.send('upsert', sourceRow(s)),
      onDelete: (s) => synced && stream.send('remove', { key: `${s.metadata.namespace}/${s.metadata.name}` }),
    },
    onListError: (e) => {
      const served = !(isNotFound(e) && !e.details?.name);
      if (!served) void informer.stop();
      stream.send('problem', {
        scope,
        served,
        message: served ? errorText(e) : 'this cluster does not serve tx.janus.io/v1alpha1 Sources',
      });
    },
  });
  let synced = false;
  informer.start();
  informer.waitForSync().then((ok) => {
    if (!ok) return;
    synced = true;
    stream.send('snapshot', { scope, rows: informer.list().map(sourceRow) });
  });
  stream.onClose(() => void informer.stop());
}

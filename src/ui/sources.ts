/**
 * The `Source` objects (tx.janus.io/v1alpha1, docs/sources.md "The Source object") beside the
 * Transactions: one row each, as `kubectl get sources` prints them, watched with the user's
 * credentials for as long as the page shows them. Read by the fields that document names, so a
 * cluster without the Source CRD (or a user who may not list them) just says so.
 */
import type { KubeClient } from '../kube/client.ts';
import { isNotFound } from '../kube/errors.ts';
import type { KubeObject } from '../kube/resources.ts';
import { errorText } from '../log/describe-error.ts';
import { Informer } from '../runtime/informer.ts';
import { dropManagedFields } from '../runtime/watch-stream.ts';
import type { EventStream } from './sse.ts';

export interface SourceRow {
  key: string;
  namespace: string;
  name: string;
  /** The commit last applied, and the transaction that applied it. */
  applied?: { commit?: string; transaction?: string; at?: string };
  /** The commit last tried, and how it ended. */
  attempted?: { commit?: string; transaction?: string; outcome?: string; reason?: string };
  /** "None", or how many objects drifted. */
  drift: string;
  ready?: { status: string; reason: string; message: string };
  created: string | undefined;
}

type Loose = Record<string, unknown> | undefined;
const field = (o: Loose, key: string): Loose => (o?.[key] as Loose) ?? undefined;
const text = (o: Loose, key: string): string | undefined =>
  typeof o?.[key] === 'string' ? (o[key] as string) : undefined;

/** The fields that are set: the row has no `undefined` in it. */
const compact = (o: Record<string, string | undefined>): Record<string, string> =>
  Object.fromEntries(Object.entries(o).filter((e): e is [string, string] => e[1] !== undefined));

export function sourceRow(source: KubeObject): SourceRow {
  const status = field(source as Record<string, unknown>, 'status');
  const applied = field(status, 'lastApplied');
  const attempted = field(status, 'lastAttempted');
  const drift = field(status, 'drift');
  const drifted = drift?.objects;
  const ready = (
    status?.conditions as { type?: string; status?: string; reason?: string; message?: string }[]
  )?.find?.((c) => c.type === 'Ready');
  return {
    key: `${source.metadata.namespace}/${source.metadata.name}`,
    namespace: source.metadata.namespace ?? '',
    name: source.metadata.name,
    ...(applied && {
      applied: compact({
        commit: text(applied, 'commit'),
        transaction: text(applied, 'transaction'),
        at: text(applied, 'at') ?? text(applied, 'time'),
      }),
    }),
    ...(attempted && {
      attempted: compact({
        commit: text(attempted, 'commit'),
        transaction: text(attempted, 'transaction'),
        outcome: text(attempted, 'outcome'),
        reason: text(attempted, 'reason'),
      }),
    }),
    drift: Array.isArray(drifted) && drifted.length > 0 ? `${drifted.length} object(s)` : 'None',
    ...(ready && {
      ready: { status: ready.status ?? '', reason: ready.reason ?? '', message: ready.message ?? '' },
    }),
    created: source.metadata.creationTimestamp,
  };
}

export const SOURCES_API = '/apis/tx.janus.io/v1alpha1';

/** Streams the scope's Sources ('' every namespace) to the page until it goes. */
export function streamSources(client: KubeClient, scope: string, stream: EventStream): void {
  const informer = new Informer<KubeObject>({
    client,
    path: scope ? `${SOURCES_API}/namespaces/${scope}/sources` : `${SOURCES_API}/sources`,
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

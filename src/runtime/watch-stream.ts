/**
 * One watch stream of a collection, run to its end: the informer's reflector loop (informer.ts)
 * decides what to do next from how it ended. Bounded by the server's timeout and, for a stream
 * that goes silent (a dropped connection), by a stall timer.
 */
import type { KubeClient, Query, WatchEvent } from '../kube/client.ts';
import { isGone, KubeApiError, type StatusBody } from '../kube/errors.ts';
import type { KubeObject } from '../kube/resources.ts';

/** Why a watch stream ended: the server's timeout, 410 Gone, another error, or no data for too long. */
export type WatchEndReason = 'closed' | 'gone' | 'error' | 'stalled';

export interface StreamEnd {
  reason: WatchEndReason;
  /** The stream delivered data (or ran long enough), so the backoff starts over. */
  healthy: boolean;
  error?: unknown;
}

/** A stream open this long past its server timeout is dead (e.g. a silently dropped connection). */
const STALL_GRACE_SECONDS = 30;
/** client-go's "very short watch": a clean close this soon with no event counts as a failure. */
const MIN_HEALTHY_STREAM_MS = 1_000;

export interface WatchOnce {
  client: Pick<KubeClient, 'watch'>;
  path: string;
  /** Selectors and the resourceVersion to start from. */
  query: Query;
  /** The server-side timeout (already jittered). */
  timeoutSeconds: number;
  signal: AbortSignal;
  /** Every event, ERROR and BOOKMARK included, for metrics. */
  onEvent(type: WatchEvent['type']): void;
  /** Every event but ERROR. */
  apply(event: WatchEvent<KubeObject>): void;
}

/** Runs the stream to its end; never throws. */
export async function watchOnce(o: WatchOnce): Promise<StreamEnd> {
  const stalled = new AbortController();
  const stallTimer = setTimeout(() => stalled.abort(), (o.timeoutSeconds + STALL_GRACE_SECONDS) * 1000);
  const query: Query = { ...o.query, allowWatchBookmarks: true, timeoutSeconds: o.timeoutSeconds };
  const started = performance.now();
  let received = 0;
  try {
    const events = o.client.watch<KubeObject | StatusBody>(
      o.path,
      query,
      AbortSignal.any([o.signal, stalled.signal]),
    );
    for await (const event of events) {
      o.onEvent(event.type);
      if (event.type === 'ERROR') {
        const error = errorFromStatus(o.path, event.object as StatusBody);
        return { reason: isGone(error) ? 'gone' : 'error', healthy: received > 0, error };
      }
      received++;
      o.apply(event as WatchEvent<KubeObject>);
    }
    if (stalled.signal.aborted) return { reason: 'stalled', healthy: received > 0 };
    return {
      reason: 'closed',
      healthy: received > 0 || performance.now() - started >= MIN_HEALTHY_STREAM_MS,
    };
  } catch (e) {
    return { reason: isGone(e) ? 'gone' : 'error', healthy: received > 0, error: e };
  } finally {
    clearTimeout(stallTimer);
  }
}

function errorFromStatus(path: string, status: StatusBody): KubeApiError {
  return new KubeApiError('WATCH', path, status.code ?? 500, status);
}

/** A transform that drops metadata.managedFields, usually the largest part of a cached object. */
export function dropManagedFields<T extends KubeObject>(obj: T): T {
  if (obj.metadata.managedFields === undefined) return obj;
  const { managedFields: _, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

/**
 * One Transaction's page, kept current: the Transaction from its scope's feed, its Events from a
 * watch of their own (opened for this page only), and the lock Leases of its targets, read again
 * whenever the Transaction changes (a lock changes hands only as some transaction moves).
 */
import type { Transaction } from '../api/v1alpha1/index.ts';
import type { KubeClient } from '../kube/client.ts';
import { isNotFound } from '../kube/errors.ts';
import type { KubeObject } from '../kube/resources.ts';
import { expiresAt, holderTransaction, isFree, type LeaseSpec } from '../locks/lease-name.ts';
import { errorText } from '../log/describe-error.ts';
import { Informer } from '../runtime/informer.ts';
import type { TransactionFeeds } from './feeds.ts';
import type { EventStream } from './sse.ts';
import { type CoreEvent, transactionDetail } from './transaction-view.ts';

export interface LockView {
  /** "<namespace>/<name>" */
  lease: string;
  /** The transaction holding it now ("<namespace>/<name>"), if any. */
  holder?: string;
  /** Whether the holder is this transaction. */
  ours: boolean;
  expires?: string;
  /** Why it could not be read (the API server's words). */
  problem?: string;
}

/** Most Events shown: the newest. */
const MAX_EVENTS = 50;

export function streamTransaction(
  client: KubeClient,
  feeds: TransactionFeeds,
  namespace: string,
  name: string,
  stream: EventStream,
): void {
  const key = `${namespace}/${name}`;
  let txn: Transaction | undefined;
  let eventsProblem: string | undefined;
  let locks: LockView[] = [];
  let lockReads = 0;
  const events = new Informer<KubeObject & CoreEvent>({
    client,
    path: `/api/v1/namespaces/${namespace}/events`,
    fieldSelector: `involvedObject.kind=Transaction,involvedObject.name=${name}`,
    resyncPeriodMs: 0,
    handlers: { onAdd: () => send(), onUpdate: () => send(), onDelete: () => send() },
    onListError: (e) => {
      eventsProblem = errorText(e);
      send();
    },
  });
  const send = () => {
    if (!txn) return;
    const list = events
      .list()
      .filter(
        (e) =>
          !txn?.metadata.uid ||
          (e as { involvedObject?: { uid?: string } }).involvedObject?.uid === txn.metadata.uid,
      );
    stream.send('detail', {
      detail: transactionDetail(txn, list.slice(-MAX_EVENTS)),
      locks,
      ...(eventsProblem && { eventsProblem }),
    });
  };
  const readLocks = async (current: Transaction) => {
    const read = ++lockReads;
    const found = await locksOf(client, current);
    if (read !== lockReads || stream.closed) return;
    locks = found;
    send();
  };
  const unsubscribe = feeds.subscribe(feeds.scopeOf(namespace), {
    snapshot: (txns) => {
      txn = txns.find((t) => t.metadata.namespace === namespace && t.metadata.name === name);
      if (!txn) stream.send('gone', { key });
      else {
        send();
        void readLocks(txn);
      }
    },
    upsert: (t) => {
      if (t.metadata.namespace !== namespace || t.metadata.name !== name) return;
      txn = t;
      send();
      void readLocks(t);
    },
    remove: (t) => {
      if (t.metadata.namespace === namespace && t.metadata.name === name) stream.send('gone', { key });
    },
    problem: (message) => stream.send('problem', { message }),
  });
  events.start();
  events.waitForSync().then((synced) => {
    if (synced) {
      eventsProblem = undefined;
      send();
    }
  });
  stream.onClose(() => {
    unsubscribe();
    void events.stop();
  });
}

/** Each target's lock Lease and who holds it; a Lease the user may not read says so. */
export async function locksOf(client: KubeClient, txn: Transaction): Promise<LockView[]> {
  const own = `${txn.metadata.namespace}/${txn.metadata.name}`;
  const leases = [...new Set((txn.status?.items ?? []).flatMap((i) => (i.lease ? [i.lease] : [])))];
  const now = Date.now();
  return Promise.all(
    leases.map(async (lease): Promise<LockView> => {
      const [namespace, name] = lease.split('/');
      try {
        const object = await client.request<{ spec?: LeaseSpec }>({
          method: 'GET',
          path: `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases/${name}`,
        });
        if (isFree(object.spec, now) || !object.spec?.holderIdentity) return { lease, ours: false };
        const holder = holderTransaction(object.spec.holderIdentity);
        const until = expiresAt(object.spec);
        return {
          lease,
          holder,
          ours: holder === own,
          ...(until && { expires: new Date(until).toISOString() }),
        };
      } catch (e) {
        if (isNotFound(e)) return { lease, ours: false };
        return { lease, ours: false, problem: errorText(e) };
      }
    }),
  );
}

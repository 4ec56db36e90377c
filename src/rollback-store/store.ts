/**
 * The rollback store of a transaction: ConfigMaps (and Secrets, for Secret targets) named
 * `<txn>-rollback[-N]`, owned by the Transaction so they are garbage-collected with it. Written
 * once, before any change is committed, with server-side apply (idempotent after a restart).
 */
import {
  API_VERSION,
  KIND,
  LABEL_MANAGED_BY,
  LABEL_TRANSACTION,
  LABEL_TRANSACTION_UID,
  MANAGED_BY,
  type Transaction,
} from '../api/v1alpha1/index.ts';
import { type KubeClient, PatchType } from '../kube/client.ts';
import {
  decodeIndex,
  decodeSnapshot,
  encodeStore,
  type Snapshot,
  type StoreIndex,
  type StoreKind,
  storeObjectName,
} from './codec.ts';

const FIELD_MANAGER = 'janus-controller';

interface DataObject {
  data?: Record<string, string>;
}

const path = (kind: StoreKind, namespace: string, name?: string) =>
  `/api/v1/namespaces/${namespace}/${kind === 'ConfigMap' ? 'configmaps' : 'secrets'}${name ? `/${name}` : ''}`;

export class RollbackStore {
  readonly #client: KubeClient;

  constructor(client: KubeClient) {
    this.#client = client;
  }

  /** Writes every snapshot; returns the name of the first ConfigMap (status.rollbackRef). */
  async write(txn: Transaction, snapshots: readonly Snapshot[]): Promise<string> {
    const encoded = encodeStore(snapshots);
    const namespace = txn.metadata.namespace ?? '';
    const writes: Array<[StoreKind, number, Record<string, string>]> = [
      ...encoded.secrets.map((data, i): [StoreKind, number, Record<string, string>] => ['Secret', i, data]),
      ...encoded.configMaps.map((data, i): [StoreKind, number, Record<string, string>] => [
        'ConfigMap',
        i,
        data,
      ]),
    ];
    // The first ConfigMap (with the index) goes last: its presence means the store is complete.
    writes.sort(
      (a, b) => Number(a[0] === 'ConfigMap' && a[1] === 0) - Number(b[0] === 'ConfigMap' && b[1] === 0),
    );
    for (const [kind, ordinal, data] of writes) {
      const name = storeObjectName(txn.metadata.name, ordinal);
      await this.#client.request({
        method: 'PATCH',
        path: path(kind, namespace, name),
        query: { fieldManager: FIELD_MANAGER, force: true },
        contentType: PatchType.apply,
        body: {
          apiVersion: 'v1',
          kind,
          metadata: {
            name,
            namespace,
            labels: {
              [LABEL_MANAGED_BY]: MANAGED_BY,
              [LABEL_TRANSACTION]: txn.metadata.name,
              [LABEL_TRANSACTION_UID]: txn.metadata.uid ?? '',
            },
            ownerReferences: [
              {
                apiVersion: API_VERSION,
                kind: KIND,
                name: txn.metadata.name,
                uid: txn.metadata.uid ?? '',
                controller: true,
                blockOwnerDeletion: true,
              },
            ],
          },
          ...(kind === 'Secret'
            ? { type: 'Opaque', data: mapValues(data, (v) => Buffer.from(v).toString('base64')) }
            : { data }),
        },
      });
    }
    return storeObjectName(txn.metadata.name, 0);
  }

  /** Opens the store for reading; objects beyond the first are fetched only when needed. */
  async open(txn: Transaction): Promise<StoreReader> {
    const namespace = txn.metadata.namespace ?? '';
    const first = await this.#client.request<DataObject>({
      method: 'GET',
      path: path('ConfigMap', namespace, storeObjectName(txn.metadata.name, 0)),
    });
    return new StoreReader(decodeIndex(first.data), first.data ?? {}, async (kind, ordinal) => {
      const obj = await this.#client.request<DataObject>({
        method: 'GET',
        path: path(kind, namespace, storeObjectName(txn.metadata.name, ordinal)),
      });
      const data = obj.data ?? {};
      return kind === 'Secret' ? mapValues(data, (v) => Buffer.from(v, 'base64').toString('utf8')) : data;
    });
  }
}

export class StoreReader {
  readonly #index: StoreIndex;
  readonly #loaded = new Map<string, Record<string, string>>();
  readonly #fetch: (kind: StoreKind, ordinal: number) => Promise<Record<string, string>>;

  constructor(
    index: StoreIndex,
    first: Record<string, string>,
    fetch: (kind: StoreKind, ordinal: number) => Promise<Record<string, string>>,
  ) {
    this.#index = index;
    this.#loaded.set('ConfigMap/0', first);
    this.#fetch = fetch;
  }

  async snapshot(itemIndex: number): Promise<Snapshot> {
    const placement = this.#index.items[String(itemIndex)];
    for (const ordinal of placement?.parts ?? []) {
      const key = `${placement?.kind}/${ordinal}`;
      if (!this.#loaded.has(key) && placement)
        this.#loaded.set(key, await this.#fetch(placement.kind, ordinal));
    }
    return decodeSnapshot(this.#index, itemIndex, (kind, ordinal) => this.#loaded.get(`${kind}/${ordinal}`));
  }
}

function mapValues(data: Record<string, string>, fn: (v: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, fn(v)]));
}

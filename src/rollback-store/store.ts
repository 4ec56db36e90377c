/**
 * The rollback store of a transaction: ConfigMaps (and Secrets, for Secret targets) named
 * `<txn>-rollback[-N]`, owned by the Transaction so they are garbage-collected with it. Written
 * once, before any change is committed; created, never adopted from someone else.
 */
import type { OwnerReference } from '../api/meta.ts';
import {
  API_VERSION,
  KIND,
  LABEL_MANAGED_BY,
  LABEL_TRANSACTION,
  LABEL_TRANSACTION_UID,
  MANAGED_BY,
  type Transaction,
} from '../api/v1alpha1/index.ts';
import type { KubeClient } from '../kube/client.ts';
import { isAlreadyExists } from '../kube/errors.ts';
import {
  decodeIndex,
  decodeSnapshot,
  encodeStore,
  type Snapshot,
  type SnapshotExpectation,
  type StoreIndex,
  type StoreKind,
  snapshotProblem,
  storeObjectName,
} from './codec.ts';

interface DataObject {
  data?: Record<string, string>;
}

interface StoreObject {
  apiVersion: 'v1';
  kind: StoreKind;
  metadata: {
    name: string;
    namespace: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    ownerReferences?: OwnerReference[];
    finalizers?: string[];
  };
  type?: string;
  data?: Record<string, string>;
}

/** A snapshot that must not be restored: not what prepare stored. */
export class SnapshotTamperedError extends Error {
  override readonly name = 'SnapshotTamperedError';

  constructor(itemIndex: number, problem: string) {
    super(`the prior state of change ${itemIndex} is not restored: ${problem}`);
  }
}

/** A rollback-store object of that name exists and was not created by this Transaction. */
export class StoreClashError extends Error {
  override readonly name = 'StoreClashError';

  constructor(kind: StoreKind, namespace: string, name: string, owner: OwnerReference | undefined) {
    super(
      `the rollback store needs ${kind} ${namespace}/${name}, but one of that name already exists and ${
        owner ? `belongs to ${owner.kind} ${owner.name} (uid ${owner.uid})` : 'was not created by Janus'
      }; it was left untouched. Rename the transaction, or remove that ${kind} if it is not needed`,
    );
  }
}

/**
 * The store's name is taken by the store of a deleted Transaction of the same name: the garbage
 * collector removes it shortly (its owner is gone), so the new transaction waits instead of failing.
 */
export class StoreAwaitingGcError extends Error {
  override readonly name = 'StoreAwaitingGcError';

  constructor(kind: StoreKind, namespace: string, name: string, owner: OwnerReference) {
    super(
      `waiting for the garbage collector to remove ${kind} ${namespace}/${name}, the rollback store of the deleted Transaction ${owner.name} (uid ${owner.uid})`,
    );
  }
}

export type ExistingStoreVerdict =
  | { kind: 'own' }
  | { kind: 'awaiting-gc'; owner: OwnerReference }
  | { kind: 'clash'; owner: OwnerReference | undefined };

/**
 * What to do with an object found under the store's name. Only this Transaction's own (same uid)
 * is rewritten. One owned by a Transaction of this name but another uid belongs to a deleted
 * Transaction (we hold the name now), so the garbage collector removes it: worth waiting for, but
 * only without finalizers, since anyone who may write ConfigMaps can forge such an owner and hold
 * the object with a finalizer to stall this transaction, with its locks, until its deadline.
 */
export function existingStoreVerdict(
  existing: { ownerReferences?: OwnerReference[]; finalizers?: string[] },
  txn: Pick<Transaction, 'metadata'>,
): ExistingStoreVerdict {
  const owner = existing.ownerReferences?.find((r) => r.controller);
  const namesake = owner?.kind === KIND && owner.name === txn.metadata.name;
  if (namesake && owner.uid && owner.uid === txn.metadata.uid) return { kind: 'own' };
  return namesake && !existing.finalizers?.length ? { kind: 'awaiting-gc', owner } : { kind: 'clash', owner };
}

function storeObject(
  txn: Transaction,
  kind: StoreKind,
  name: string,
  data: Record<string, string>,
): StoreObject {
  const namespace = txn.metadata.namespace ?? '';
  return {
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
  };
}

const path = (kind: StoreKind, namespace: string, name?: string) =>
  `/api/v1/namespaces/${namespace}/${kind === 'ConfigMap' ? 'configmaps' : 'secrets'}${name ? `/${name}` : ''}`;

export class RollbackStore {
  readonly #client: KubeClient;

  constructor(client: KubeClient) {
    this.#client = client;
  }

  /**
   * Writes every snapshot; returns the name of the first ConfigMap (status.rollbackRef). Each
   * object is created, never adopted: one that exists already is rewritten only if this same
   * Transaction (by uid) created it before a restart; anyone else's is left alone and the write
   * fails with StoreClashError.
   */
  async write(txn: Transaction, snapshots: readonly Snapshot[]): Promise<string> {
    const namespace = txn.metadata.namespace ?? '';
    const encoded = encodeStore(snapshots, namespace);
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
      await this.#createOrRewriteOwn(
        txn,
        storeObject(txn, kind, storeObjectName(txn.metadata.name, ordinal), data),
      );
    }
    return storeObjectName(txn.metadata.name, 0);
  }

  async #createOrRewriteOwn(txn: Transaction, object: StoreObject): Promise<void> {
    const { kind, metadata } = object;
    try {
      await this.#client.request({ method: 'POST', path: path(kind, metadata.namespace), body: object });
      return;
    } catch (e) {
      if (!isAlreadyExists(e)) throw e;
    }
    const existing = await this.#client.request<StoreObject>({
      method: 'GET',
      path: path(kind, metadata.namespace, metadata.name),
    });
    const verdict = existingStoreVerdict(existing.metadata, txn);
    if (verdict.kind === 'awaiting-gc') {
      throw new StoreAwaitingGcError(kind, metadata.namespace, metadata.name, verdict.owner);
    }
    if (verdict.kind === 'clash') {
      throw new StoreClashError(kind, metadata.namespace, metadata.name, verdict.owner);
    }
    // Ours, from before a restart: the prior states were read again under the same locks.
    await this.#client.request({
      method: 'PUT',
      path: path(kind, metadata.namespace, metadata.name),
      body: { ...object, metadata: { ...metadata, resourceVersion: existing.metadata.resourceVersion } },
    });
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

const FIRST = 'ConfigMap/0';

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
    this.#loaded.set(FIRST, first);
    this.#fetch = fetch;
  }

  /** A change's prior state, checked against what prepare recorded; SnapshotTamperedError if it differs. */
  async snapshot(itemIndex: number, expected: SnapshotExpectation): Promise<Snapshot> {
    const placement = this.#index.items[String(itemIndex)];
    const wanted = new Set((placement?.parts ?? []).map((ordinal) => `${placement?.kind}/${ordinal}`));
    // Only the first object and this snapshot's stay loaded: at most MAX_PARTS_PER_SNAPSHOT + 1
    // objects of up to 1 MiB per rollback in progress, however large the store.
    for (const key of this.#loaded.keys()) if (key !== FIRST && !wanted.has(key)) this.#loaded.delete(key);
    for (const ordinal of placement?.parts ?? []) {
      const key = `${placement?.kind}/${ordinal}`;
      if (!this.#loaded.has(key) && placement)
        this.#loaded.set(key, await this.#fetch(placement.kind, ordinal));
    }
    const snapshot = decodeSnapshot(this.#index, itemIndex, (kind, ordinal) =>
      this.#loaded.get(`${kind}/${ordinal}`),
    );
    const problem = snapshotProblem(snapshot.prior, expected);
    if (problem) throw new SnapshotTamperedError(itemIndex, problem);
    return snapshot;
  }
}

function mapValues(data: Record<string, string>, fn: (v: string) => string): Record<string, string> {
  return Object.fromEntries(Object.entries(data).map(([k, v]) => [k, fn(v)]));
}

import { describe, expect, it } from 'vitest';
import { MAX_CHANGES } from '../../../src/api/v1alpha1/index.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import {
  compactPrior,
  decodeIndex,
  decodeSnapshot,
  type EncodedStore,
  encodeStore,
  INDEX_KEY,
  OBJECT_BUDGET_BYTES,
  type Snapshot,
  type StoreKind,
  snapshotDigest,
  snapshotProblem,
  storeKindFor,
  storeObjectName,
} from '../../../src/rollback-store/codec.ts';

const MiB = 1024 * 1024;

function configMap(name: string, data: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'shop', resourceVersion: '812', uid: `uid-${name}` },
    data,
  };
}

function secret(name: string, data: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'Opaque',
    metadata: { name, namespace: 'shop', resourceVersion: '813' },
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  };
}

/** Reads every snapshot back through the index, as the store reader does. */
function decodeAll(store: EncodedStore, indexes: number[]): Snapshot[] {
  const index = decodeIndex(store.configMaps[0]);
  const dataOf = (kind: StoreKind, ordinal: number) =>
    (kind === 'ConfigMap' ? store.configMaps : store.secrets)[ordinal];
  return indexes.map((i) => decodeSnapshot(index, i, dataOf));
}

/** What the API server counts against an object's size: the UTF-8 bytes of keys and values. */
function bytesOf(data: Record<string, string>, kind: StoreKind): number {
  return Object.entries(data).reduce(
    (sum, [k, v]) =>
      sum +
      Buffer.byteLength(k) +
      (kind === 'Secret' ? Buffer.from(v).toString('base64').length : Buffer.byteLength(v)),
    0,
  );
}

function expectEveryObjectWithinBudget(store: EncodedStore): void {
  for (const [i, data] of store.configMaps.entries()) {
    expect(bytesOf(data, 'ConfigMap'), `ConfigMap #${i}`).toBeLessThanOrEqual(OBJECT_BUDGET_BYTES);
  }
  for (const [i, data] of store.secrets.entries()) {
    expect(bytesOf(data, 'Secret'), `Secret #${i}`).toBeLessThanOrEqual(OBJECT_BUDGET_BYTES);
  }
}

describe('encodeStore / decodeSnapshot: small stores', () => {
  const snapshots: Snapshot[] = [
    { index: 0, prior: configMap('app-config', { mode: 'blue' }) },
    { index: 1, prior: undefined },
    {
      index: 2,
      prior: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'shop' },
        spec: { replicas: 3 },
      },
    },
  ];

  it('fit in one ConfigMap holding the index, with no Secret', () => {
    const store = encodeStore(snapshots, 'shop');
    expect(store.configMaps).toHaveLength(1);
    expect(store.secrets).toHaveLength(0);
    expect(Object.keys(store.configMaps[0] ?? {}).sort()).toEqual([INDEX_KEY, 'item-0', 'item-1', 'item-2']);
    expect(decodeIndex(store.configMaps[0])).toMatchObject({ version: 1, configMaps: 1, secrets: 0 });
  });

  it('round-trip exactly, including a target that did not exist (prior: undefined)', () => {
    const store = encodeStore(snapshots, 'shop');
    expect(decodeAll(store, [0, 1, 2])).toEqual(snapshots);
    expect(decodeAll(store, [1])[0]).toEqual({ index: 1, prior: undefined });
  });

  it('round-trip through JSON, as they are when read back from the API server', () => {
    const store = JSON.parse(JSON.stringify(encodeStore(snapshots, 'shop'))) as EncodedStore;
    expect(decodeAll(store, [2, 0, 1])).toEqual([snapshots[2], snapshots[0], snapshots[1]]);
  });

  it('keeps sparse change indexes apart', () => {
    const sparse: Snapshot[] = [
      { index: 7, prior: configMap('seven', { n: '7' }) },
      { index: 70, prior: configMap('seventy', { n: '70' }) },
    ];
    expect(decodeAll(encodeStore(sparse, 'shop'), [70, 7])).toEqual([sparse[1], sparse[0]]);
  });

  it('an empty store still has its index', () => {
    const store = encodeStore([], 'shop');
    expect(decodeIndex(store.configMaps[0])).toEqual({ version: 1, configMaps: 1, secrets: 0, items: {} });
  });
});

describe('encodeStore: Secrets', () => {
  const PLAIN = 'correct-horse-battery-staple';
  const snapshots: Snapshot[] = [
    { index: 0, prior: configMap('app-config', { mode: 'blue' }) },
    { index: 1, prior: secret('db-credentials', { password: PLAIN, user: 'app' }) },
  ];

  it('never puts a Secret’s data in any ConfigMap value, the index included', () => {
    const store = encodeStore(snapshots, 'shop');
    const base64 = Buffer.from(PLAIN).toString('base64');
    for (const data of store.configMaps) {
      for (const value of Object.values(data)) {
        expect(value).not.toContain(base64);
        expect(value).not.toContain(PLAIN);
        expect(value).not.toContain('db-credentials');
      }
    }
    expect(store.secrets).toHaveLength(1);
    expect(JSON.stringify(store.secrets)).toContain(base64);
  });

  it('records the Secret placement in the index and reads it back', () => {
    const store = encodeStore(snapshots, 'shop');
    expect(decodeIndex(store.configMaps[0]).items['1']).toEqual({ kind: 'Secret', parts: [0] });
    expect(decodeAll(store, [0, 1])).toEqual(snapshots);
  });

  it('splits a Secret larger than one object over several Secrets only, within budget once base64-encoded', () => {
    const big = secret('tls-bundle', { 'ca.crt': 'C'.repeat(600 * 1024), 'tls.key': 'K'.repeat(600 * 1024) });
    const store = encodeStore(
      [
        { index: 0, prior: configMap('a', { x: '1' }) },
        { index: 1, prior: big },
      ],
      'shop',
    );
    const placement = decodeIndex(store.configMaps[0]).items['1'];
    expect(placement?.kind).toBe('Secret');
    expect(placement?.parts.length).toBeGreaterThan(1);
    expect(store.configMaps).toHaveLength(1);
    for (const value of Object.values(store.configMaps[0] ?? {})) expect(value).not.toContain('CCCCCCCC');
    expectEveryObjectWithinBudget(store);
    expect(decodeAll(store, [1])[0]?.prior).toEqual(big);
  });

  it('goes by API group and kind: a custom resource named like a core kind is no core kind', () => {
    const lookalike: KubeObject = {
      apiVersion: 'example.io/v1',
      kind: 'ConfigMap',
      metadata: { name: 's', namespace: 'shop' },
      spec: {},
    };
    const store = encodeStore([{ index: 0, prior: lookalike }], 'shop');
    expect(store.secrets).toHaveLength(1);
    expect(decodeIndex(store.configMaps[0]).items['0']?.kind).toBe('Secret');
  });
});

describe('encodeStore: stores larger than one object', () => {
  it('spreads many snapshots totalling over 1 MiB across several ConfigMaps, each within budget', () => {
    const snapshots: Snapshot[] = Array.from({ length: 12 }, (_, i) => ({
      index: i,
      prior: configMap(`cm-${i}`, { payload: String(i).repeat(200 * 1024) }),
    }));
    const total = snapshots.reduce((n, s) => n + JSON.stringify(s.prior).length, 0);
    expect(total).toBeGreaterThan(2 * MiB);

    const store = encodeStore(snapshots, 'shop');
    expect(store.configMaps.length).toBeGreaterThan(2);
    expectEveryObjectWithinBudget(store);
    expect(decodeIndex(store.configMaps[0]).configMaps).toBe(store.configMaps.length);
    expect(
      decodeAll(
        store,
        snapshots.map((s) => s.index),
      ),
    ).toEqual(snapshots);
  });

  it('keeps the first ConfigMap within budget with its index, for the maximum of 256 changes', () => {
    const snapshots: Snapshot[] = Array.from({ length: MAX_CHANGES }, (_, i) => ({
      index: i,
      prior: configMap(`cm-${i}`, { payload: 'p'.repeat(7 * 1024) }),
    }));
    const store = encodeStore(snapshots, 'shop');
    expect(Object.keys(decodeIndex(store.configMaps[0]).items)).toHaveLength(MAX_CHANGES);
    expectEveryObjectWithinBudget(store);
    expect(decodeAll(store, [0, 128, 255])).toEqual([snapshots[0], snapshots[128], snapshots[255]]);
  });

  it('splits one snapshot larger than an object into parts and reassembles it exactly', () => {
    const lines = Array.from({ length: 40_000 }, (_, i) => `key.${i}=value-${i}-${'z'.repeat(i % 37)}`);
    const huge = configMap('everything', { 'app.properties': lines.join('\n') });
    expect(JSON.stringify(huge).length).toBeGreaterThan(OBJECT_BUDGET_BYTES);
    const snapshots: Snapshot[] = [
      { index: 0, prior: configMap('small', { a: '1' }) },
      { index: 1, prior: huge },
    ];

    const store = encodeStore(snapshots, 'shop');
    const placement = decodeIndex(store.configMaps[0]).items['1'];
    expect(placement?.parts.length).toBeGreaterThan(1);
    expect(new Set(placement?.parts).size).toBe(placement?.parts.length);
    expect(
      store.configMaps.flatMap((d) => Object.keys(d)).filter((k) => k.startsWith('item-1.part-')),
    ).toHaveLength(placement?.parts.length ?? 0);
    expectEveryObjectWithinBudget(store);
    expect(decodeAll(store, [0, 1])).toEqual(snapshots);
  });

  it('keeps every object within budget when values are multi-byte UTF-8 text', () => {
    // Two translation ConfigMaps, each legal on its own (300 000 CJK characters = 900 000 bytes).
    const snapshots: Snapshot[] = [
      { index: 0, prior: configMap('messages-zh', { 'messages.txt': '日'.repeat(300_000) }) },
      { index: 1, prior: configMap('messages-ja', { 'messages.txt': '本'.repeat(300_000) }) },
    ];
    const store = encodeStore(snapshots, 'shop');
    expectEveryObjectWithinBudget(store);
    expect(decodeAll(store, [0, 1])).toEqual(snapshots);
  });

  it('never splits a character between parts, so parts survive UTF-8 on the way to the API server', () => {
    const head = configMap('dashboards', { 'a.json': '' });
    // Mostly ASCII, with a run of emoji (two UTF-16 units each) around the first split point.
    const prefixLength = JSON.stringify(head).indexOf('""') + 1;
    const chunk = OBJECT_BUDGET_BYTES - 1024;
    const ascii = 'x'.repeat(chunk - prefixLength - 1001); // odd offset: a split would land mid-emoji
    head.data = { 'a.json': `${ascii}${'📈'.repeat(1000)}${'y'.repeat(10_000)}` };
    const store = encodeStore([{ index: 0, prior: head }], 'shop');
    expect(decodeIndex(store.configMaps[0]).items['0']?.parts.length).toBeGreaterThan(1);

    for (const data of store.configMaps) {
      for (const [key, value] of Object.entries(data)) expect(value.isWellFormed(), key).toBe(true);
    }
    const overTheWire = store.configMaps.map((data) =>
      Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('utf8')])),
    );
    expect(decodeAll({ configMaps: overTheWire, secrets: [] }, [0])[0]?.prior).toEqual(head);
  });
});

describe('decodeIndex / decodeSnapshot errors', () => {
  it('a store without its index cannot be read', () => {
    expect(() => decodeIndex(undefined)).toThrow(/index\.json/);
    expect(() => decodeIndex({ 'item-0': 'null' })).toThrow(/index\.json/);
  });

  it('a change without a snapshot is reported', () => {
    const store = encodeStore([{ index: 0, prior: undefined }], 'shop');
    expect(() => decodeAll(store, [3])).toThrow(/no snapshot for change 3/);
  });

  it('a missing part is reported, naming the key and the object', () => {
    const store = encodeStore(
      [{ index: 0, prior: configMap('big', { v: 'q'.repeat(OBJECT_BUDGET_BYTES) }) }],
      'shop',
    );
    const index = decodeIndex(store.configMaps[0]);
    const last = index.items['0']?.parts.at(-1) ?? 0;
    expect(() =>
      decodeSnapshot(index, 0, (_kind, ordinal) => (ordinal === last ? {} : store.configMaps[ordinal])),
    ).toThrow(/missing item-0\.part-\d+ \(ConfigMap #\d+\)/);
  });
});

describe('storeKindFor: snapshots stay as private as their source', () => {
  const inShop = (apiVersion: string, kind: string, namespace?: string): KubeObject => ({
    apiVersion,
    kind,
    metadata: { name: 'x', ...(namespace && { namespace }) },
  });

  it("keeps objects of the transaction's own namespace that view can read in the ConfigMap", () => {
    expect(storeKindFor(inShop('v1', 'ConfigMap', 'shop'), 'shop')).toBe('ConfigMap');
    expect(storeKindFor(inShop('apps/v1', 'Deployment', 'shop'), 'shop')).toBe('ConfigMap');
    expect(storeKindFor(undefined, 'shop')).toBe('ConfigMap');
  });

  it('puts Secrets, RBAC objects, other namespaces and cluster-scoped objects in a Secret', () => {
    expect(storeKindFor(inShop('v1', 'Secret', 'shop'), 'shop')).toBe('Secret');
    expect(storeKindFor(inShop('rbac.authorization.k8s.io/v1', 'RoleBinding', 'shop'), 'shop')).toBe(
      'Secret',
    );
    expect(storeKindFor(inShop('v1', 'ConfigMap', 'payments'), 'shop')).toBe('Secret');
    expect(storeKindFor(inShop('rbac.authorization.k8s.io/v1', 'ClusterRole'), 'shop')).toBe('Secret');
    expect(storeKindFor(inShop('v1', 'Namespace'), 'shop')).toBe('Secret');
  });

  it('records a snapshot of another namespace in a Secret of the store, and reads it back', () => {
    const foreign = {
      index: 0,
      prior: { ...configMap('rates', { eur: '1.1' }), metadata: { name: 'rates', namespace: 'payments' } },
    };
    const store = encodeStore([foreign], 'shop');
    expect(decodeIndex(store.configMaps[0]).items['0']?.kind).toBe('Secret');
    expect(JSON.stringify(store.configMaps)).not.toContain('eur');
    expect(decodeAll(store, [0])).toEqual([foreign]);
  });
});

describe('snapshotProblem: a rollback restores only what prepare stored', () => {
  const prior = configMap('app-config', { mode: 'blue' });
  const target = { apiVersion: 'v1', kind: 'ConfigMap', name: 'app-config', namespace: 'shop' };

  it('accepts the snapshot prepare stored, and "did not exist"', () => {
    expect(snapshotProblem(prior, { target, digest: snapshotDigest(prior) })).toBeUndefined();
    expect(snapshotProblem(undefined, { target, digest: snapshotDigest(undefined) })).toBeUndefined();
  });

  it('refuses a snapshot edited in the store', () => {
    const edited = { ...prior, data: { mode: 'evil' } };
    expect(snapshotProblem(edited, { target, digest: snapshotDigest(prior) })).toMatch(
      /modified .* after prepare/,
    );
    expect(snapshotProblem(undefined, { target, digest: snapshotDigest(prior) })).toMatch(/modified/);
  });

  it('refuses, without a digest (prepared by 0.1), a snapshot of another object', () => {
    const other: KubeObject = {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'take-over' },
    };
    expect(snapshotProblem(other, { target })).toMatch(/another object \(ClusterRoleBinding \/take-over\)/);
    expect(
      snapshotProblem({ ...prior, metadata: { ...prior.metadata, namespace: 'kube-system' } }, { target }),
    ).toMatch(/another object/);
    expect(snapshotProblem(prior, { target })).toBeUndefined();
  });
});

describe('storeObjectName', () => {
  it('names the first object <txn>-rollback and the others <txn>-rollback-<n>', () => {
    expect(storeObjectName('deploy-v2', 0)).toBe('deploy-v2-rollback');
    expect(storeObjectName('deploy-v2', 1)).toBe('deploy-v2-rollback-1');
    expect(storeObjectName('deploy-v2', 12)).toBe('deploy-v2-rollback-12');
  });
});

describe('compactPrior', () => {
  it('drops managedFields and keeps everything else', () => {
    const prior = configMap('app-config', { mode: 'blue' });
    prior.metadata.managedFields = [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:data': {} } }];
    prior.metadata.labels = { app: 'web' };
    const compact = compactPrior(prior);
    expect(compact.metadata).not.toHaveProperty('managedFields');
    const { managedFields: _m, ...rest } = prior.metadata;
    expect(compact).toEqual({ ...prior, metadata: rest });
    expect(prior.metadata.managedFields).toHaveLength(1);
  });

  it("keeps the entries of the manager a source's Apply undo needs, and only those", () => {
    const prior = configMap('app-config', { mode: 'blue' });
    const source = { manager: 'janus-source:shop/shop', operation: 'Apply', fieldsV1: { 'f:data': {} } };
    prior.metadata.managedFields = [{ manager: 'kubectl', operation: 'Update', fieldsV1: {} }, source];
    expect(compactPrior(prior, 'janus-source:shop/shop').metadata.managedFields).toEqual([source]);
    expect(compactPrior(prior, 'janus-source:shop/other').metadata).not.toHaveProperty('managedFields');
  });
});

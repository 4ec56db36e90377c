/**
 * The Apply change of a source's transaction: which manager it writes under, how its undo puts
 * the prior state back, and the requests it sends for each case, over the in-memory API.
 */
import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import { applyFieldManager, applyUndoOf } from '../../../src/changes/apply.ts';
import type { ChangeItem } from '../../../src/changes/change-context.ts';
import { commit, undo } from '../../../src/changes/operations.ts';
import { strategyOf } from '../../../src/changes/strategy.ts';
import type { KubeRequest } from '../../../src/kube/client.ts';
import { CORE_MAPPINGS, Discovery, type KubeObject, Objects } from '../../../src/kube/resources.ts';
import { appliedByValue, fieldManager } from '../../../src/saga/targets.ts';
import { FakeApi } from '../../support/fake-api.ts';
import { txnIn } from '../saga/transaction-fixture.ts';

const SOURCE_MANAGER = 'janus-source:shop/web';
const sourceTxn: Transaction = (() => {
  const t = txnIn({ status: { fieldManager: 'janus:deploy-v2@recorded' } });
  return { ...t, spec: { ...t.spec, sourceRef: { name: 'web' } } };
})();
const PATH = '/api/v1/namespaces/shop/configmaps/app-config';

const item: ChangeItem = {
  index: 0,
  change: {
    type: 'Apply',
    target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'app-config' },
    content: { data: { mode: 'green' } },
  },
  target: { apiVersion: 'v1', group: '', kind: 'ConfigMap', name: 'app-config', namespace: 'shop' },
};

/** A ConfigMap as the server returns it, with managedFields entries. */
function configMap(
  data: Record<string, string>,
  managedFields: { manager: string; operation: string; apiVersion?: string; fields?: object }[] = [],
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'app-config',
      namespace: 'shop',
      managedFields: managedFields.map((m) => ({
        manager: m.manager,
        operation: m.operation,
        apiVersion: m.apiVersion ?? 'v1',
        fieldsType: 'FieldsV1',
        fieldsV1: m.fields ?? { 'f:data': { 'f:mode': {} } },
      })),
    },
    data,
  };
}

describe('the manager an Apply writes under', () => {
  it("is its source's, the same for every transaction of the source", () => {
    expect(applyFieldManager(sourceTxn, true)).toBe(SOURCE_MANAGER);
    expect(applyFieldManager(sourceTxn, false)).toBe(SOURCE_MANAGER);
  });

  it("is the transaction's own without a source: recorded at prepare, or planned", () => {
    const own = txnIn({ status: { fieldManager: 'janus:deploy-v2@recorded' } });
    expect(applyFieldManager(own, true)).toBe('janus:deploy-v2@recorded');
    expect(applyFieldManager(own, false)).toBe(fieldManager(own));
  });
});

describe("how an Apply's undo puts the prior state back", () => {
  it('deletes what did not exist', () => {
    expect(applyUndoOf(sourceTxn, undefined)).toBe('delete');
  });

  it("applies again what the source's manager had applied", () => {
    const prior = configMap({ mode: 'blue' }, [{ manager: SOURCE_MANAGER, operation: 'Apply' }]);
    expect(applyUndoOf(sourceTxn, prior)).toBe('reapply');
  });

  it('replaces an object the source had not applied (adopted), or applied in another version', () => {
    const cases = [
      configMap({ mode: 'blue' }),
      configMap({ mode: 'blue' }, [{ manager: 'kubectl', operation: 'Apply' }]),
      configMap({ mode: 'blue' }, [{ manager: SOURCE_MANAGER, operation: 'Update' }]),
      configMap({ mode: 'blue' }, [{ manager: 'janus-source:shop/other', operation: 'Apply' }]),
      configMap({ mode: 'blue' }, [{ manager: SOURCE_MANAGER, operation: 'Apply', apiVersion: 'v2' }]),
    ];
    for (const prior of cases) expect(applyUndoOf(sourceTxn, prior)).toBe('replace');
    // Without a source, the manager is the transaction's own: never on a prior object.
    const own = txnIn({ status: { fieldManager: 'janus:deploy-v2@recorded' } });
    expect(applyUndoOf(own, configMap({}, [{ manager: SOURCE_MANAGER, operation: 'Apply' }]))).toBe(
      'replace',
    );
  });

  it('may find the target present or absent at prepare, recognises its stamp, and its undo by content', () => {
    const strategy = strategyOf(item);
    expect(strategy.existence).toBe('either');
    const stamped = configMap({ mode: 'green' });
    stamped.metadata.annotations = { 'tx.janus.io/applied-by': appliedByValue(sourceTxn, 0) };
    expect(strategy.isApplied(sourceTxn, item, stamped)).toBe(true);
    expect(strategy.isApplied(sourceTxn, item, configMap({ mode: 'green' }))).toBe(false);
    const prior = configMap({ mode: 'blue' });
    expect(strategy.isUndone(sourceTxn, item, prior, configMap({ mode: 'blue' }))).toBe(true);
    expect(strategy.isUndone(sourceTxn, item, prior, configMap({ mode: 'green' }))).toBe(false);
  });
});

/** The in-memory API, recording each request with its body. */
function world() {
  const api = new FakeApi();
  const sent: KubeRequest[] = [];
  api.before = (req) => {
    sent.push(req);
  };
  const client = api.client();
  const discovery = new Discovery(client);
  for (const m of CORE_MAPPINGS) discovery.seed(m);
  const ctx = { txn: sourceTxn, objects: new Objects(client, discovery) };
  const requests = () => sent.map((r) => `${r.method} ${r.path}`);
  return { api, sent, ctx, requests };
}

describe('an Apply committed', () => {
  it('creates a target absent at prepare by a forced apply under the source manager, after a look', async () => {
    const { api, sent, ctx, requests } = world();
    const result = await commit(ctx, item, { resourceVersion: '' });
    expect(result).toMatchObject({ kind: 'committed', recognized: false });
    expect(requests()).toEqual([`GET ${PATH}`, `PATCH ${PATH}`]);
    expect(sent[1]?.query).toMatchObject({ fieldManager: SOURCE_MANAGER, force: true });
    expect(api.get(item.target)?.data).toEqual({ mode: 'green' });
  });

  it('leaves alone a target that appeared since prepare: a conflict, nothing written', async () => {
    const { api, ctx, requests } = world();
    api.put(configMap({ mode: 'theirs' }));
    const result = await commit(ctx, item, { resourceVersion: '' });
    expect(result).toEqual({
      kind: 'conflict',
      message: 'change 0: ConfigMap shop/app-config was created by someone else after prepare',
    });
    expect(requests().filter((r) => !r.startsWith('GET'))).toEqual([]);
    expect(api.get(item.target)?.data).toEqual({ mode: 'theirs' });
  });

  it('recognises its own earlier create after a restart, and sends nothing', async () => {
    const { api, ctx, requests } = world();
    const ours = configMap({ mode: 'green' });
    ours.metadata.annotations = { 'tx.janus.io/applied-by': appliedByValue(sourceTxn, 0) };
    api.put(ours);
    expect(await commit(ctx, item, { resourceVersion: '' })).toMatchObject({
      kind: 'committed',
      recognized: true,
    });
    expect(requests()).toEqual([`GET ${PATH}`]);
  });

  it("applies over a present target conditionally on prepare's resourceVersion", async () => {
    const { api, sent, ctx } = world();
    const prior = api.put(configMap({ mode: 'blue' }));
    const rv = prior.metadata.resourceVersion ?? '';
    expect(await commit(ctx, item, { resourceVersion: rv })).toMatchObject({ kind: 'committed' });
    expect((sent[0]?.body as KubeObject | undefined)?.metadata.resourceVersion).toBe(rv);
    api.put(configMap({ mode: 'someone else' }));
    expect(await commit(ctx, item, { resourceVersion: rv })).toMatchObject({ kind: 'conflict' });
  });
});

describe('an Apply undone', () => {
  it("re-applies what the source's manager had applied, read from the prior object", async () => {
    const { api, sent, ctx, requests } = world();
    const prior = configMap({ mode: 'blue', kept: 'yes' }, [
      { manager: SOURCE_MANAGER, operation: 'Apply', fields: { 'f:data': { 'f:mode': {}, 'f:kept': {} } } },
    ]);
    const now = api.put(
      configMap({ mode: 'green' }, [
        { manager: SOURCE_MANAGER, operation: 'Apply', fields: { 'f:data': { 'f:mode': {} } } },
      ]),
    );
    const rv = now.metadata.resourceVersion ?? '';
    expect(await undo(ctx, item, { committedResourceVersion: rv }, prior)).toEqual({ kind: 'undone' });
    expect(requests()).toEqual([`GET ${PATH}`, `PATCH ${PATH}`]);
    expect(sent[1]?.query).toMatchObject({ fieldManager: SOURCE_MANAGER, force: true });
    expect(sent[1]?.body).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'app-config', namespace: 'shop', resourceVersion: rv },
      data: { mode: 'blue', kept: 'yes' },
    });
  });

  it('replaces an adopted object with its prior state, and deletes what it created', async () => {
    const { api, ctx, requests } = world();
    const now = api.put(configMap({ mode: 'green' }));
    const rv = now.metadata.resourceVersion ?? '';
    expect(await undo(ctx, item, { committedResourceVersion: rv }, configMap({ mode: 'blue' }))).toEqual({
      kind: 'undone',
    });
    expect(requests()).toEqual([`PUT ${PATH}`]);
    expect(api.get(item.target)?.data).toEqual({ mode: 'blue' });

    const created = api.get(item.target) as KubeObject;
    const createdRv = created.metadata.resourceVersion ?? '';
    expect(await undo(ctx, item, { committedResourceVersion: createdRv }, undefined)).toEqual({
      kind: 'undone',
    });
    expect(api.get(item.target)).toBeUndefined();
  });
});

describe("a source's prune undone", () => {
  const prune: ChangeItem = { ...item, change: { type: 'Delete', target: item.change.target } };

  it("re-creates what the source's manager had applied by its apply, so the source owns it again", async () => {
    const { api, sent, ctx, requests } = world();
    const prior = configMap({ mode: 'blue' }, [{ manager: SOURCE_MANAGER, operation: 'Apply' }]);
    expect(await undo(ctx, prune, { committedResourceVersion: '' }, prior)).toEqual({ kind: 'undone' });
    expect(requests()).toEqual([`GET ${PATH}`, `PATCH ${PATH}`]);
    expect(sent[1]?.query).toMatchObject({ fieldManager: SOURCE_MANAGER, force: true });
    expect(api.get(item.target)?.data).toEqual({ mode: 'blue' });
  });

  it('leaves alone an object of that name someone created since, unless it is the prior one again', async () => {
    const { api, ctx, requests } = world();
    const prior = configMap({ mode: 'blue' }, [{ manager: SOURCE_MANAGER, operation: 'Apply' }]);
    api.put(configMap({ mode: 'theirs' }));
    expect(await undo(ctx, prune, { committedResourceVersion: '' }, prior)).toMatchObject({
      kind: 'conflict',
    });
    expect(requests().filter((r) => !r.startsWith('GET'))).toEqual([]);
    api.put(configMap({ mode: 'blue' }));
    expect(await undo(ctx, prune, { committedResourceVersion: '' }, prior)).toEqual({ kind: 'undone' });
  });

  it('re-creates by a create what the source had not applied, as any Delete', async () => {
    const { ctx, requests } = world();
    expect(await undo(ctx, prune, { committedResourceVersion: '' }, configMap({ mode: 'blue' }))).toEqual({
      kind: 'undone',
    });
    expect(requests()).toEqual(['POST /api/v1/namespaces/shop/configmaps']);
  });
});

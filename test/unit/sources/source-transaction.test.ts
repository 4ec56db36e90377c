/**
 * A source's commit as its Transaction: named after the commit (collision-safe), labelled and
 * annotated with its provenance and render, stamped; the inventory it leaves read back from it
 * after a restart; the statuses and records around it.
 */
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  ANNOTATION_SOURCE_LEFT,
  ANNOTATION_SOURCE_RENDER_DIGEST,
  type Change,
  LABEL_SOURCE,
  MAX_SOURCE_NAME,
  type Transaction,
} from '../../../src/api/v1alpha1/index.ts';
import { rejectionStatusOf } from '../../../src/commit-status/listener.ts';
import { statusOfTransaction } from '../../../src/commit-status/state.ts';
import { hasValidStamp } from '../../../src/gitops/provenance.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { renderTransactionResult } from '../../../src/results/render-transaction.ts';
import { changesForRender, type LeftInCluster } from '../../../src/sources/changes-for-render.ts';
import { inventoryEntry } from '../../../src/sources/inventory.ts';
import { inventoryFromTransaction } from '../../../src/sources/inventory-recovery.ts';
import { renderRenderFailure, renderSuperseded } from '../../../src/sources/source-records.ts';
import {
  attemptStatus,
  refusedStatus,
  settledStatus,
  unchangedStatus,
} from '../../../src/sources/source-status.ts';
import { sourceTransaction, transactionNames } from '../../../src/sources/source-transaction.ts';

const COMMIT = '3f2a9c1e5b7d9f0a1c2e3f4a5b6c7d8e9f0a1b2c';
const KEY = 'the controller key';
const context = { controllerVersion: '0.1.0', identity: 'janus' };
const cm = (
  name: string,
  data: Record<string, string> = {},
  annotations?: Record<string, string>,
): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'shop', ...(annotations && { annotations }) },
  data,
});

describe('transactionNames', () => {
  it('is <source>-<7 hex> first, then longer prefixes, then 6 hex and a letter no hex has', () => {
    const names = transactionNames('shop', COMMIT);
    expect(names.slice(0, 3)).toEqual(['shop-3f2a9c1', 'shop-3f2a9c1e', 'shop-3f2a9c1e5']);
    expect(names).toContain('shop-3f2a9cg');
    expect(new Set(names).size).toBe(names.length);
  });

  it('fits a source name of the longest length with 7 hex, and still has others to try', () => {
    const long = 'a'.repeat(MAX_SOURCE_NAME);
    const names = transactionNames(long, COMMIT);
    expect(names[0]).toBe(`${long}-3f2a9c1`);
    expect(names.every((n) => n.length <= 63)).toBe(true);
    expect(names.length).toBeGreaterThan(10);
  });
});

function build(changes: Change[], left: LeftInCluster[] = []) {
  return sourceTransaction({
    source: {
      name: 'shop',
      namespace: 'shop',
      spec: {
        path: 'deploy',
        kustomize: {},
        serviceAccountName: 'deployer',
        timeout: '10m',
        health: { timeout: '2m' },
      },
    },
    name: 'shop-3f2a9c1',
    file: 'sources/shop.yaml',
    repository: 'https://git.example.com/deploys.git',
    branch: 'main',
    commit: COMMIT,
    sequence: 7,
    changes,
    renderDigest: 'd'.repeat(64),
    left,
    stampKey: 'stamp',
  });
}

describe('sourceTransaction', () => {
  it('names the source, its commit, its file and its render, and carries the stamp', () => {
    const plan = changesForRender({ objects: [cm('a')], inventory: [], prune: true, digestKey: KEY });
    if (plan.kind !== 'changes') throw new Error('no changes');
    const txn = build(plan.changes);
    expect(txn.metadata.labels?.[LABEL_SOURCE]).toBe('shop');
    expect(txn.spec).toMatchObject({
      serviceAccountName: 'deployer',
      timeout: '10m',
      health: { timeout: '2m' },
      sourceRef: { name: 'shop' },
    });
    expect(txn.metadata.annotations).toMatchObject({
      'tx.janus.io/source-repository': 'https://git.example.com/deploys.git',
      'tx.janus.io/source-revision': `main@sha1:${COMMIT}`,
      'tx.janus.io/source-path': 'sources/shop.yaml',
      'tx.janus.io/source-sequence': '7',
      [ANNOTATION_SOURCE_RENDER_DIGEST]: 'd'.repeat(64),
    });
    expect(hasValidStamp(txn, 'stamp')).toBe(true);
    expect(hasValidStamp(txn, 'another key')).toBe(false);
  });

  it('records the source, its render and what it leaves in the cluster, and shows on the commit under the source', () => {
    const before = changesForRender({
      objects: [cm('a'), cm('kept')],
      inventory: [],
      prune: false,
      digestKey: KEY,
    });
    if (before.kind !== 'changes') throw new Error('no changes');
    const plan = changesForRender({
      objects: [cm('a', { x: '1' })],
      inventory: before.next,
      prune: false,
      digestKey: KEY,
    });
    if (plan.kind !== 'changes') throw new Error('no changes');
    const txn: Transaction = { ...build(plan.changes, plan.left), status: { phase: 'Committed' } };
    const record = renderTransactionResult(txn, context);
    const document = parse(Object.values(record.files)[0] ?? '');
    expect(document.render).toEqual({
      source: 'shop',
      digest: 'd'.repeat(64),
      left: [
        'v1 ConfigMap shop/kept is left in the cluster: the source does not prune (spec.prune is false)',
      ],
    });
    expect(record.message).toContain('Janus-Source-Name: shop/shop');
    expect(statusOfTransaction(txn)?.context).toBe('janus/shop/shop');
  });
});

describe('inventoryFromTransaction', () => {
  it("is the render's inventory: what was applied, without what was pruned or left", () => {
    const first = changesForRender({
      objects: [cm('a'), cm('b'), cm('old'), cm('kept', {}, { 'tx.janus.io/prune': 'disabled' })],
      inventory: [],
      prune: true,
      digestKey: KEY,
    });
    if (first.kind !== 'changes') throw new Error('no changes');
    const render = [cm('a'), cm('new'), cm('b', { changed: 'yes' })];
    const plan = changesForRender({ objects: render, inventory: first.next, prune: true, digestKey: KEY });
    if (plan.kind !== 'changes') throw new Error('no changes');
    const txn = build(plan.changes, plan.left);
    expect(JSON.parse(txn.metadata.annotations?.[ANNOTATION_SOURCE_LEFT] ?? '[]')[0]).toMatchObject({
      kind: 'ConfigMap',
      name: 'kept',
      reason: 'PruneDisabled',
    });
    const recovered = inventoryFromTransaction(first.next, txn, KEY);
    const byName = (entries: typeof recovered) => [...entries].sort((x, y) => (x.name < y.name ? -1 : 1));
    expect(byName(recovered)).toEqual(byName(plan.next));
    // The objects applied keep the render's order; one the commit did not change keeps its place.
    expect(plan.next.map((e) => e.name)).toEqual(['a', 'new', 'b']);
    expect(recovered.map((e) => e.name)).toEqual(['new', 'a', 'b']);
  });
});

describe('the Source status', () => {
  const now = new Date('2025-01-01T00:00:00Z');
  const at = { revision: COMMIT, transaction: 'shop-3f2a9c1', renderDigest: 'd'.repeat(64) };
  const inventory = [inventoryEntry(cm('a'), KEY)];

  it('names the attempt before its transaction exists, then its outcome', () => {
    const started = attemptStatus({}, at, now, 3);
    expect(started.lastAttempted).toMatchObject({
      shortRevision: '3f2a9c1',
      outcome: 'InProgress',
      transaction: 'shop-3f2a9c1',
    });
    expect(started.conditions?.find((c) => c.type === 'Reconciling')?.status).toBe('True');
    const committed = settledStatus(
      started,
      { phase: 'Committed', message: 'done', time: '2025-01-01T00:01:00Z' },
      inventory,
      now,
      3,
    );
    expect(committed.lastApplied).toEqual({
      revision: COMMIT,
      shortRevision: '3f2a9c1',
      transaction: 'shop-3f2a9c1',
      time: '2025-01-01T00:01:00Z',
    });
    expect(committed.inventory).toEqual(inventory);
    expect(committed.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    const rolledBack = settledStatus(
      { ...started, inventory },
      { phase: 'RolledBack', message: 'unhealthy', time: undefined },
      undefined,
      now,
    );
    expect(rolledBack.lastApplied).toBeUndefined();
    expect(rolledBack.inventory).toEqual(inventory);
    expect(rolledBack.lastAttempted).toMatchObject({ outcome: 'RolledBack', reason: 'unhealthy' });
    expect(rolledBack.conditions?.find((c) => c.type === 'Stalled')?.status).toBe('True');
  });

  it('says why a render failed or was refused, and moves to a commit the cluster already holds', () => {
    const failed = refusedStatus(
      {},
      at,
      'RenderFailed',
      `deploy/kustomization.yaml:3: kustomize: ${'x'.repeat(40_000)}`,
      now,
    );
    expect(failed.lastAttempted?.outcome).toBe('RenderFailed');
    expect(failed.lastAttempted?.reason?.length).toBeLessThanOrEqual(32768);
    const same = unchangedStatus(
      {
        lastApplied: {
          revision: 'a'.repeat(40),
          shortRevision: 'aaaaaaa',
          transaction: 'shop-aaaaaaa',
          time: 't',
        },
      },
      at,
      inventory,
      now,
    );
    expect(same.lastApplied).toMatchObject({ revision: COMMIT, transaction: 'shop-aaaaaaa' });
    expect(same.lastAttempted?.outcome).toBe('Committed');
  });
});

describe("the records of a source's commits that became no transaction", () => {
  const ref = {
    namespace: 'shop',
    source: 'shop',
    name: 'shop-3f2a9c1',
    file: 'sources/shop.yaml',
    repository: 'https://git.example.com/deploys.git',
    branch: 'main',
    commit: COMMIT,
  };

  it("records a failed render with the tool's file and line, and fails the commit's status under the source", () => {
    const record = renderRenderFailure(
      ref,
      { tool: 'kustomize', file: 'deploy/kustomization.yaml', line: 4, message: 'bad' },
      context,
    );
    expect(Object.keys(record.files)).toEqual(['results/shop/shop-3f2a9c1.yaml']);
    expect(parse(Object.values(record.files)[0] ?? '')).toMatchObject({
      phase: 'RenderFailed',
      render: { source: 'shop', tool: 'kustomize', file: 'deploy/kustomization.yaml', line: 4 },
      errors: [
        { file: 'deploy/kustomization.yaml', line: 4, code: 'render-failed', message: 'kustomize: bad' },
      ],
    });
    const status = rejectionStatusOf(record, {})?.status;
    expect(status).toMatchObject({
      sha: COMMIT,
      context: 'janus/shop/shop',
      state: 'failure',
      phase: 'RenderFailed',
    });
    expect(status?.description).toBe(
      'RenderFailed, nothing applied: deploy/kustomization.yaml:4: kustomize: bad',
    );
  });

  it('records a superseded commit, shown as success naming the commit applied instead', () => {
    const record = renderSuperseded(ref, 'b'.repeat(40), context);
    expect(record.message.split('\n')[0]).toBe('shop/shop-3f2a9c1: Superseded by bbbbbbb');
    expect(rejectionStatusOf(record, {})?.status).toMatchObject({
      state: 'success',
      description: 'Superseded: not applied on its own; bbbbbbb was applied instead, with its changes',
    });
  });
});

/**
 * The bounds of a source's transaction on the real API server: the first apply of the largest
 * render a source may have (MAX_SOURCE_OBJECTS objects of a chart's usual kinds) is one
 * Transaction the CRD admits (its duplicate-target rule is quadratic at run time) and etcd stores
 * with a status of as many items, every condition message at its bound; one change more is refused.
 */
import { describe, expect, it } from 'vitest';
import {
  type ItemStatus,
  MAX_CHANGES,
  MAX_SOURCE_OBJECTS,
  type Transaction,
} from '../../../src/api/v1alpha1/index.ts';
import { KubeApiError } from '../../../src/kube/errors.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { changesForRender } from '../../../src/sources/changes-for-render.ts';
import { chartObject } from '../../support/cluster/chart-objects.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { testNamespace, transaction, txnRef } from '../../support/cluster/saga.ts';

const clients = useClients();

function firstApply(ns: string, name: string, count: number): Transaction {
  const objects = Array.from({ length: count }, (_, i) => chartObject(i, ns));
  const plan = changesForRender({ objects, inventory: [], prune: true, digestKey: 'key' });
  // One more than a source may render is refused before any Transaction: build it by hand.
  const changes =
    plan.kind === 'changes'
      ? plan.changes
      : objects.map((o) => ({
          type: 'Apply' as const,
          target: { apiVersion: o.apiVersion, kind: o.kind, name: o.metadata.name, namespace: ns },
          content: o as unknown as Record<string, unknown>,
        }));
  const txn = transaction(ns, name, changes, { serviceAccountName: 'deployer' });
  txn.spec.sourceRef = { name: 'shop' };
  return txn;
}

/** The status of a transaction of `count` changes rolled back, every free text at its bound. */
function fullStatus(count: number): Transaction['status'] {
  const items: ItemStatus[] = Array.from({ length: count }, (_, i) => ({
    target: `apps/v1 Deployment shop/svc-${String(i).padStart(4, '0')}`,
    type: 'Apply',
    prepared: true,
    committed: true,
    rolledBack: true,
    resourceVersion: '123456789',
    committedResourceVersion: '123456999',
    lease: `shop/janus-lock-${'f'.repeat(40)}`,
    snapshotDigest: 'd'.repeat(64),
    committedFingerprint: 'e'.repeat(64),
    health: {
      status: 'Current',
      reason: 'RolloutComplete',
      message: 'Deployment is available: 2/2 replicas',
      since: '2026-01-01T00:00:00Z',
    },
  }));
  const condition = (type: string) => ({
    type,
    status: 'False' as const,
    reason: 'RolledBack',
    message: 'x'.repeat(32_768),
    lastTransitionTime: '2026-01-01T00:00:00Z',
  });
  return {
    phase: 'RolledBack',
    progress: `0/${count}`,
    items,
    conditions: ['Ready', 'Reconciling', 'Stalled', 'Healthy'].map(condition),
  };
}

describe("a source's largest transaction", () => {
  it(`holds the first apply of ${MAX_SOURCE_OBJECTS} objects, with a full status; ${MAX_CHANGES + 1} changes are refused`, async () => {
    expect(MAX_SOURCE_OBJECTS).toBeLessThanOrEqual(MAX_CHANGES);
    const ns = await testNamespace(clients.admin, 'src-bounds');
    const largest = firstApply(ns, 'largest', MAX_SOURCE_OBJECTS);
    expect(largest.spec.changes).toHaveLength(MAX_SOURCE_OBJECTS);
    await clients.admin.create(largest as unknown as KubeObject);
    await clients.admin.patch(
      txnRef(ns, 'largest'),
      { status: fullStatus(MAX_CHANGES) },
      'application/merge-patch+json',
      {
        subresource: 'status',
      },
    );
    const stored = await clients.admin.client.request<unknown>({
      method: 'GET',
      path: `/apis/tx.janus.io/v1alpha1/namespaces/${ns}/transactions/largest`,
    });
    // What etcd holds is about this (JSON); its request limit is 1.5 MiB.
    expect(JSON.stringify(stored).length).toBeLessThan(1.5 * 1024 * 1024);

    const tooMany = firstApply(ns, 'too-many', MAX_CHANGES + 1);
    const refused = await clients.admin
      .create(tooMany as unknown as KubeObject, { dryRun: true })
      .catch((e) => e);
    expect(refused).toBeInstanceOf(KubeApiError);
    expect((refused as KubeApiError).serverMessage).toContain(`must have at most ${MAX_CHANGES} items`);
  });
});

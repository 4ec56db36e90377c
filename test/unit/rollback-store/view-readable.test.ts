/**
 * Issue 21, finding 9: a rollback store's ConfigMap is readable by `view`, so it may hold only
 * prior states of kinds the built-in `view` role reads itself; a custom resource's (say a
 * Widget's spec.apiKey), a Lease's, a Transaction's and any unknown kind's go to the Secret.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/resources.ts';
import {
  decodeIndex,
  decodeSnapshot,
  encodeStore,
  INDEX_KEY,
  storeKindFor,
} from '../../../src/rollback-store/codec.ts';
import { VIEW_READABLE_KINDS, viewMayRead } from '../../../src/rollback-store/view-readable.ts';

const inShop = (apiVersion: string, kind: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion,
  kind,
  metadata: { name: 'x', namespace: 'shop' },
  ...extra,
});
const widget = inShop('example.com/v1', 'Widget', { spec: { apiKey: 'sk-live-0123456789' } });

describe('storeKindFor: only what the built-in view role reads goes to the ConfigMap', () => {
  it('puts a custom resource in the Secret, so view never reads its spec from the store', () => {
    expect(storeKindFor(widget, 'shop')).toBe('Secret');
    const store = encodeStore([{ index: 0, prior: widget }], 'shop');
    expect(JSON.stringify(store.configMaps)).not.toContain('sk-live');
    expect(store.secrets).toHaveLength(1);
  });

  it.each([
    ['coordination.k8s.io/v1', 'Lease'],
    ['tx.janus.io/v1alpha1', 'Transaction'],
    ['v1', 'Secret'],
    ['v1', 'PodTemplate'],
    ['rbac.authorization.k8s.io/v1', 'Role'],
    ['apps/v1', 'Widget'],
    ['example.com/v1', 'Deployment'],
    ['scheduling.k8s.io/v1alpha1', 'PodGroup'],
  ])('puts %s %s (not readable by view) in the Secret', (apiVersion, kind) => {
    expect(storeKindFor(inShop(apiVersion, kind), 'shop')).toBe('Secret');
  });

  it.each([
    ['v1', 'ConfigMap'],
    ['v1', 'Service'],
    ['v1', 'ServiceAccount'],
    ['v1', 'PersistentVolumeClaim'],
    ['apps/v1', 'Deployment'],
    ['apps/v1', 'StatefulSet'],
    ['batch/v1', 'CronJob'],
    ['autoscaling/v2', 'HorizontalPodAutoscaler'],
    ['networking.k8s.io/v1', 'Ingress'],
    ['policy/v1', 'PodDisruptionBudget'],
  ])('keeps %s %s of its own namespace (readable by view) in the ConfigMap', (apiVersion, kind) => {
    expect(storeKindFor(inShop(apiVersion, kind), 'shop')).toBe('ConfigMap');
  });

  it('still puts a viewable kind of another namespace, or a cluster-scoped one, in the Secret', () => {
    expect(storeKindFor(inShop('v1', 'ConfigMap'), 'payments')).toBe('Secret');
    expect(storeKindFor({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } }, 'shop')).toBe(
      'Secret',
    );
  });

  it('lists kinds by group and kind, whatever the version', () => {
    expect(viewMayRead('apps/v1beta2', 'Deployment')).toBe(true);
    expect(viewMayRead('v1', 'Secret')).toBe(false);
    expect([...VIEW_READABLE_KINDS].every((k) => /^[a-z0-9.]*\/[A-Z][A-Za-z]+$/.test(k))).toBe(true);
  });
});

describe('a store written under the old rule still rolls back', () => {
  it('finds a Widget whose prior state an older Janus put in the ConfigMap', () => {
    const json = JSON.stringify(widget);
    const index = {
      version: 1,
      configMaps: 1,
      secrets: 0,
      items: { '0': { kind: 'ConfigMap', parts: [0] } },
    };
    const first = { [INDEX_KEY]: JSON.stringify(index), 'item-0': json };
    const read = decodeSnapshot(decodeIndex(first), 0, (kind, ordinal) =>
      kind === 'ConfigMap' && ordinal === 0 ? first : undefined,
    );
    expect(read).toEqual({ index: 0, prior: widget });
  });
});

/**
 * The sagas the crash tests kill, in both layers (the real controller process, test/crash/; the
 * in-memory one, test/unit/crash/): four changes of every type that commit; the same four plus a
 * fifth refused at commit, which rolls the four back; a ConfigMap and a Deployment rolled out
 * through the health gate; a source's transaction (Apply and prune), committed or rolled back.
 * The changes and what is compared of the targets are defined once here; each layer makes the
 * objects its own way.
 */
import type { Change, Transaction } from '../../../src/api/v1alpha1/index.ts';
import { appliedEntry, type FieldSet } from '../../../src/changes/managed-fields.ts';
import type { KubeObject, Objects } from '../../../src/kube/resources.ts';
import { sourceFieldManager } from '../../../src/saga/targets.ts';
import {
  ALL_ON_CONFIGMAPS,
  cmTarget,
  fourChanges,
  fourTargets,
  serviceAccount,
  transaction,
} from '../cluster/saga.ts';
import type { Scenario } from './crash.ts';

export const REFUSED_OBJECT = 'refused';
export const CONFIGMAP_TARGETS = ['created', 'updated', 'patched', 'deleted', REFUSED_OBJECT];

/** fourChanges(), and with `withRefused` a fifth whose commit an admission policy refuses. */
export function configMapChanges(withRefused: boolean): Change[] {
  const list = fourChanges();
  if (withRefused)
    list.push({ target: cmTarget(REFUSED_OBJECT), type: 'Create', content: { data: { no: 'pe' } } });
  return list;
}

/** Which change of which transaction wrote the object last (namespace and uid left out). */
export const appliedBy = (obj: KubeObject): string | undefined =>
  obj.metadata.annotations?.['tx.janus.io/applied-by']?.replace(/^[^/]+\//, '').replace(/@.*#/, '#');

/** What a ConfigMap target holds, compared across runs. */
export const configMapState = (cm: (KubeObject & { data?: Record<string, string> }) | undefined) =>
  cm && { data: cm.data ?? {}, appliedBy: appliedBy(cm) };

/** The Transaction's ServiceAccount's rights for a gated rollout (rolloutChanges). */
export const ROLLOUT_DEPLOYER = [
  { apiGroups: [''], resources: ['configmaps'], verbs: ['*'] },
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] },
];

/** The ConfigMap app-config to release v2, and the Deployment web to `image`. */
export function rolloutChanges(image: string): Change[] {
  return [
    { target: cmTarget('app-config'), type: 'Patch', content: { data: { release: 'v2' } } },
    {
      target: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      type: 'Patch',
      content: { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } },
    },
  ];
}

/** The StatefulSet db's pods to `image` (the forced rollback's release). */
export function statefulSetChanges(image: string): Change[] {
  return [
    {
      target: { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' },
      type: 'Patch',
      content: { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } },
    },
  ];
}

function scenario(admin: Objects, withRefused: boolean): Scenario {
  return {
    phase: withRefused ? 'RolledBack' : 'Committed',
    async setup(namespace) {
      await serviceAccount(admin, namespace, 'deployer', [ALL_ON_CONFIGMAPS]);
      await fourTargets(admin, namespace);
    },
    transaction(namespace) {
      return transaction(namespace, 'crashy', configMapChanges(withRefused));
    },
    async observe(namespace) {
      const out: Record<string, unknown> = {};
      for (const name of CONFIGMAP_TARGETS) {
        out[name] = configMapState(
          await admin.find({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace }),
        );
      }
      return out;
    },
  };
}

export const committingScenario = (admin: Objects) => scenario(admin, false);
export const rollingBackScenario = (admin: Objects) => scenario(admin, true);

/** The source (spec.sourceRef) of source-transaction's commit, whose field manager applies. */
export const SOURCE = 'shop';
export const SOURCE_TARGETS = ['created', 'updated', 'pruned', REFUSED_OBJECT];
const SOURCE_LABELS = { app: 'shop' };

/** What the source's previous commit applied, as its field manager: `updated` and `pruned`. */
export function sourceAppliedBefore(namespace: string): KubeObject[] {
  const object = (name: string, data: Record<string, string>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace, labels: SOURCE_LABELS },
    data,
  });
  return [
    object('updated', { kept: 'value', changed: 'before', dropped: 'by this commit' }),
    object('pruned', { precious: 'data' }),
  ];
}

/**
 * The source's next commit: creates `created` by Apply, applies `updated` without one of the
 * fields it applied before, prunes `pruned`; with `withRefused`, a fourth Apply that an
 * admission policy refuses at commit, so the three are rolled back (the update re-applied by
 * the source's manager, the pruned object re-created by it).
 */
export function sourceTransaction(namespace: string, withRefused: boolean): Transaction {
  const changes: Change[] = [
    { target: cmTarget('created'), type: 'Apply', content: { data: { fresh: 'yes' } } },
    {
      target: cmTarget('updated'),
      type: 'Apply',
      content: { metadata: { labels: SOURCE_LABELS }, data: { kept: 'value', changed: 'after' } },
    },
    { target: cmTarget('pruned'), type: 'Delete' },
  ];
  if (withRefused)
    changes.push({ target: cmTarget(REFUSED_OBJECT), type: 'Apply', content: { data: { no: 'pe' } } });
  const txn = transaction(namespace, `${SOURCE}-abcdef1`, changes);
  txn.spec.sourceRef = { name: SOURCE };
  return txn;
}

/** The fields of a FieldsV1 set, each as its keys joined by dots (`.`, the map itself, left out). */
function fieldPaths(set: FieldSet, prefix: string[] = []): string[] {
  const keys = Object.keys(set).filter((k) => k !== '.');
  if (keys.length === 0) return prefix.length > 0 ? [prefix.join('.')] : [];
  return keys.flatMap((k) => fieldPaths(set[k] as FieldSet, [...prefix, k.replace(/^f:/, '')]));
}

/**
 * What a target of the source's transaction holds, compared across runs: its content, who wrote
 * it last, and the fields the source's manager owns (its Apply entry in managedFields), sorted.
 */
export function sourceTargetState(cm: (KubeObject & { data?: Record<string, string> }) | undefined) {
  if (!cm) return undefined;
  const entry = appliedEntry(cm, sourceFieldManager(cm.metadata.namespace ?? '', SOURCE));
  return {
    data: cm.data ?? {},
    labels: cm.metadata.labels ?? {},
    appliedBy: appliedBy(cm),
    ownedBySource: entry?.fieldsV1 && fieldPaths(entry.fieldsV1).sort(),
  };
}

const STAMP = 'metadata.annotations.tx.janus.io/applied-by';

/** Where the source's transaction ends, committed: in both layers, every run. */
export const SOURCE_COMMITTED = {
  created: {
    data: { fresh: 'yes' },
    labels: {},
    appliedBy: `${SOURCE}-abcdef1#0`,
    ownedBySource: ['data.fresh', STAMP],
  },
  updated: {
    data: { kept: 'value', changed: 'after' },
    labels: SOURCE_LABELS,
    appliedBy: `${SOURCE}-abcdef1#1`,
    ownedBySource: ['data.changed', 'data.kept', STAMP, 'metadata.labels.app'],
  },
  pruned: undefined,
  [REFUSED_OBJECT]: undefined,
};

/** Where it ends, rolled back: as the source's previous commit left the targets, the stamps gone. */
export const SOURCE_ROLLED_BACK = {
  created: undefined,
  updated: {
    data: { kept: 'value', changed: 'before', dropped: 'by this commit' },
    labels: SOURCE_LABELS,
    appliedBy: undefined,
    ownedBySource: ['data.changed', 'data.dropped', 'data.kept', 'metadata.labels.app'],
  },
  pruned: {
    data: { precious: 'data' },
    labels: SOURCE_LABELS,
    appliedBy: undefined,
    ownedBySource: ['data.precious', 'metadata.labels.app'],
  },
  [REFUSED_OBJECT]: undefined,
};

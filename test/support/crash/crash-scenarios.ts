/**
 * The sagas the crash tests kill, in both layers (the real controller process, test/crash/; the
 * in-memory one, test/unit/crash/): four changes of every type that commit; the same four plus a
 * fifth refused at commit, which rolls the four back; a ConfigMap and a Deployment rolled out
 * through the health gate. The changes and what is compared of the targets are defined once
 * here; each layer makes the objects its own way.
 */
import type { Change } from '../../../src/api/v1alpha1/index.ts';
import type { KubeObject, Objects } from '../../../src/kube/resources.ts';
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

/**
 * Issue 21, finding 9, tried as the identity that would try it: a user with the built-in `view`
 * role in the namespace. `view` refuses her a custom resource (here a Widget whose spec holds an
 * API key); the rollback store of a Transaction that patched the Widget must not hand her its
 * prior state either, and the rollback must still restore it exactly.
 */
import { describe, expect, it } from 'vitest';
import { applyManifests } from '../../../src/cli/demo/manifests.ts';
import { isForbidden } from '../../../src/kube/errors.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { annotate, testNamespace, transaction, waitForPhase } from '../../support/cluster/saga.ts';
import { withController } from '../../support/processes/controller-process.ts';

const clients = useClients();

const GROUP = 'isolation.janus.test';
const WIDGETS: KubeObject = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: { apiKey: { type: 'string' }, size: { type: 'integer' } },
              },
            },
          },
        },
      },
    ],
  },
} as KubeObject;
const widgetRef = (namespace: string) => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'Widget',
  name: 'gadget',
  namespace,
});
const OLD_KEY = 'sk-live-before-4f1c9a7e';

/** Reads as `reader`; undefined when refused (403). */
async function readAs(reader: typeof clients.alice, ref: Parameters<typeof clients.alice.get>[0]) {
  try {
    return await reader.get(ref);
  } catch (e) {
    if (isForbidden(e)) return undefined;
    throw e;
  }
}

describe('a rollback store never shows view a prior state view may not read', () => {
  it("keeps a Widget's prior spec out of the store ConfigMap, and still restores it exactly", async () => {
    await applyManifests(clients.admin, [WIDGETS]);
    const ns = await testNamespace(clients.admin, 'iso-store-view', {
      deployer: [{ apiGroups: [GROUP], resources: ['widgets'], verbs: ['*'] }],
    });
    await clients.admin.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'alice-view', namespace: ns },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: clients.users.alice }],
    });
    const before = await clients.admin.create({
      ...widgetRef(ns),
      metadata: { name: 'gadget', namespace: ns, labels: { team: 'a' } },
      spec: { apiKey: OLD_KEY, size: 3 },
    } as unknown as KubeObject);
    // view itself refuses her the Widget.
    expect(await readAs(clients.alice, widgetRef(ns))).toBeUndefined();

    await withController(
      { kubeconfig: clients.kubeconfigs.controller, namespace: ns, logLevel: 'info' },
      async () => {
        await clients.admin.create(
          transaction(ns, 'rotate', [
            { target: widgetRef(ns), type: 'Patch', content: { spec: { apiKey: 'sk-live-after', size: 4 } } },
          ]),
        );
        await waitForPhase(clients.admin, ns, 'rotate', 'Committed');

        // What view reads of the store: the ConfigMap, never the Secret; neither names the old key.
        const store = await readAs(clients.alice, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          name: 'rotate-rollback',
          namespace: ns,
        });
        expect(store).toBeDefined();
        expect(JSON.stringify(store)).not.toContain(OLD_KEY);
        expect(
          await readAs(clients.alice, {
            apiVersion: 'v1',
            kind: 'Secret',
            name: 'rotate-rollback',
            namespace: ns,
          }),
        ).toBeUndefined();

        await annotate(clients.admin, ns, 'rotate', { 'tx.janus.io/request-rollback': 'rotate back' });
        await waitForPhase(clients.admin, ns, 'rotate', 'RolledBack');
      },
    );
    const after = (await clients.admin.get(widgetRef(ns))) as KubeObject & { spec?: unknown };
    expect(after.spec).toEqual({ apiKey: OLD_KEY, size: 3 });
    expect(after.metadata.labels).toEqual(before.metadata.labels);
    expect(after.metadata.uid).toBe(before.metadata.uid);
  });
});

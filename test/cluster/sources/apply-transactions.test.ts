/**
 * A source's transactions, made by hand as the Git side makes them (src/sources: the render
 * compared with the inventory, Apply and Delete changes, spec.sourceRef), on a control plane that
 * runs workloads: a commit that fails the health gate puts every object back exactly as the
 * previous commit left it (content, and what the source's field manager owns: a field the commit
 * removed is back and the source's again, the pruned ConfigMap re-created, the new one gone); the
 * same commit succeeding removes what it removed, and a later one removes a field from the cluster.
 */
import { describe, expect, it } from 'vitest';
import type { Change, InventoryEntry, Transaction } from '../../../src/api/v1alpha1/index.ts';
import { appliedEntry } from '../../../src/changes/managed-fields.ts';
import { cleanForRestore } from '../../../src/changes/undo-rules.ts';
import type { KubeObject, ObjectRef } from '../../../src/kube/resources.ts';
import { sourceFieldManager } from '../../../src/saga/targets.ts';
import { changesForRender } from '../../../src/sources/changes-for-render.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import { testNamespace, transaction, waitForPhase } from '../../support/cluster/saga.ts';
import { availableWith } from '../../support/cluster/workloads.ts';
import { withController } from '../../support/processes/controller-process.ts';

const clients = useClients();
const SOURCE = 'shop';
const DIGEST_KEY = 'the controller key';
const DEPLOYER = [
  { apiGroups: [''], resources: ['configmaps'], verbs: ['*'] },
  { apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] },
];

interface Release {
  image: string;
  /** The Deployment's tier label and FEATURE variable: commit 2 removes both. */
  legacy: boolean;
  /** The generated ConfigMap's name suffix and content, as kustomize's configMapGenerator makes them. */
  generated: { suffix: string; data: Record<string, string> };
  settings: Record<string, string>;
}

/** What the source renders for a release, in apply order (ConfigMaps before the Deployment). */
function render(ns: string, r: Release): KubeObject[] {
  const generatedName = `web-env-${r.generated.suffix}`;
  return [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'settings', namespace: ns, labels: { app: 'web' } },
      data: r.settings,
    },
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: generatedName, namespace: ns, labels: { app: 'web', generated: 'true' } },
      data: r.generated.data,
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: ns, labels: { app: 'web', ...(r.legacy && { tier: 'frontend' }) } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            containers: [
              {
                name: 'app',
                image: r.image,
                envFrom: [{ configMapRef: { name: generatedName } }],
                ...(r.legacy && { env: [{ name: 'FEATURE', value: 'on' }] }),
              },
            ],
          },
        },
      },
    },
  ];
}

const RELEASE_1: Release = {
  image: POD_IMAGES.ready,
  legacy: true,
  generated: { suffix: '5f8d9c7b2k', data: { COLOR: 'blue' } },
  settings: { mode: 'blue', legacy: 'yes' },
};
const RELEASE_2 = (image: string): Release => ({
  image,
  legacy: false,
  generated: { suffix: 'h7t4m2b9fd', data: { COLOR: 'green' } },
  settings: { mode: 'green', region: 'eu' },
});

/** The transaction of a commit, as the Git side makes it: the render compared with the inventory. */
function commitTransaction(ns: string, commit: string, objects: KubeObject[], inventory: InventoryEntry[]) {
  const plan = changesForRender({ objects, inventory, prune: true, digestKey: DIGEST_KEY });
  if (plan.kind !== 'changes') throw new Error(`commit ${commit}: ${JSON.stringify(plan)}`);
  const txn: Transaction = transaction(ns, `${SOURCE}-${commit}`, plan.changes, {
    serviceAccountName: 'deployer',
    health: { timeout: '2m' },
  });
  txn.spec.sourceRef = { name: SOURCE };
  txn.metadata.labels = { ...txn.metadata.labels, 'tx.janus.io/source': SOURCE };
  return { txn, plan };
}

const refOf = (o: KubeObject): ObjectRef => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  name: o.metadata.name,
  namespace: o.metadata.namespace,
});

/** What must come back after a rollback: the content, without what the server and controllers keep. */
function content(obj: KubeObject | undefined): unknown {
  if (!obj) return undefined;
  const clean = cleanForRestore(obj);
  const annotations = { ...clean.metadata.annotations };
  delete annotations['deployment.kubernetes.io/revision'];
  return { ...clean, metadata: { ...clean.metadata, annotations } };
}

/** The fields the source's manager owns, as the server records them. */
function ownedBySource(ns: string, obj: KubeObject | undefined): unknown {
  return obj && appliedEntry(obj, sourceFieldManager(ns, SOURCE))?.fieldsV1;
}

function changeSummary(changes: Change[]): string[] {
  return changes.map((c) => `${c.type} ${c.target.kind} ${c.target.name}`);
}

describe("a source's transactions", () => {
  it('roll a failed commit back to the previous render exactly, and remove what a committed one removed', {
    timeout: 600_000,
  }, async () => {
    const ns = await testNamespace(clients.admin, 'src-apply', { deployer: DEPLOYER });
    const find = (o: KubeObject) => clients.admin.find(refOf(o));
    await withController(
      { kubeconfig: clients.kubeconfigs.controller, namespace: ns, logLevel: 'info' },
      async () => {
        // Commit 1: everything new.
        const first = commitTransaction(ns, '1111111', render(ns, RELEASE_1), []);
        expect(changeSummary(first.plan.changes)).toEqual([
          'Apply ConfigMap settings',
          'Apply ConfigMap web-env-5f8d9c7b2k',
          'Apply Deployment web',
        ]);
        await clients.admin.create(first.txn);
        await waitForPhase(clients.admin, ns, first.txn.metadata.name, 'Committed', 180_000);
        await availableWith(clients.admin, ns, 'web', POD_IMAGES.ready);
        const inventory1 = first.plan.next;
        const before = await Promise.all(render(ns, RELEASE_1).map(find));
        // The source's manager owns the tier label and the FEATURE variable it applied.
        const webOwned = JSON.stringify(ownedBySource(ns, before[2]));
        expect(webOwned).toContain('"f:tier"');
        expect(webOwned).toContain('k:{\\"name\\":\\"FEATURE\\"}');

        // Commit 2, a release whose pods crash-loop: the health gate rolls it all back.
        const failing = commitTransaction(
          ns,
          '2222222',
          render(ns, RELEASE_2(POD_IMAGES.crashLoop)),
          inventory1,
        );
        expect(changeSummary(failing.plan.changes)).toEqual([
          'Apply ConfigMap settings',
          'Apply ConfigMap web-env-h7t4m2b9fd',
          'Apply Deployment web',
          'Delete ConfigMap web-env-5f8d9c7b2k',
        ]);
        await clients.admin.create(failing.txn);
        const rolledBack = await waitForPhase(
          clients.admin,
          ns,
          failing.txn.metadata.name,
          'RolledBack',
          240_000,
        );
        const events = await clients.admin.list('v1', 'Event', ns);
        const failed = events.items.find((e) => (e as { reason?: string }).reason === 'HealthCheckFailed');
        expect((failed as { message?: string } | undefined)?.message).toMatch(/CrashLoopBackOff/);
        expect(rolledBack.status?.items?.every((i) => i.rolledBack && !i.conflict)).toBe(true);
        await availableWith(clients.admin, ns, 'web', POD_IMAGES.ready);

        const after = await Promise.all(render(ns, RELEASE_1).map(find));
        for (const [i, obj] of before.entries()) {
          const what = `${obj?.kind} ${obj?.metadata.name}`;
          expect(content(after[i]), what).toEqual(content(obj));
          expect(ownedBySource(ns, after[i]), `${what}: fields the source owns`).toEqual(
            ownedBySource(ns, obj),
          );
        }
        // The pruned ConfigMap is a new object with the old content; the new one is gone.
        expect(after[1]?.metadata.uid).not.toBe(before[1]?.metadata.uid);
        expect(await find(render(ns, RELEASE_2(POD_IMAGES.crashLoop))[1] as KubeObject)).toBeUndefined();

        // The same commit with pods that start: committed, and what it removed is gone.
        const fixed = commitTransaction(
          ns,
          '3333333',
          render(ns, RELEASE_2(POD_IMAGES.readyAlternative)),
          inventory1,
        );
        await clients.admin.create(fixed.txn);
        await waitForPhase(clients.admin, ns, fixed.txn.metadata.name, 'Committed', 180_000);
        const web = (await clients.admin.get(refOf(before[2] as KubeObject))) as KubeObject & {
          spec: { template: { spec: { containers: { image: string; env?: unknown }[] } } };
        };
        expect(web.metadata.labels).toEqual({ app: 'web' });
        expect(web.spec.template.spec.containers[0]).not.toHaveProperty('env');
        expect(web.spec.template.spec.containers[0]?.image).toBe(POD_IMAGES.readyAlternative);
        expect((await find(before[0] as KubeObject))?.data).toEqual({ mode: 'green', region: 'eu' });
        expect(await find(before[1] as KubeObject)).toBeUndefined();

        // Commit 3 drops a key of settings: a field removed from Git is removed from the cluster.
        const release3 = { ...RELEASE_2(POD_IMAGES.readyAlternative), settings: { mode: 'green' } };
        const third = commitTransaction(ns, '4444444', render(ns, release3), fixed.plan.next);
        expect(changeSummary(third.plan.changes)).toEqual(['Apply ConfigMap settings']);
        await clients.admin.create(third.txn);
        await waitForPhase(clients.admin, ns, third.txn.metadata.name, 'Committed', 180_000);
        expect((await find(before[0] as KubeObject))?.data).toEqual({ mode: 'green' });
      },
    );
  });
});

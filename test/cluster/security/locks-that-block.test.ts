/**
 * Locks that block (docs/security.md, "Locks that block"), against the real API server with the
 * admission policy and RBAC of manifests/: while a Transaction holds its targets, in its bake
 * window, `alice` (who may edit everything in the namespace, and the ClusterRole) is refused
 * `kubectl edit`, `patch`, `scale`, `delete` and the create of a name the Transaction deleted,
 * each refusal naming the Transaction, its phase and `janus status`; the cluster's own
 * controllers still roll the pods and collect garbage; the break-glass group gets through; once
 * the Transaction is Committed every object is open again. In a namespace labelled Warn the same
 * writes go through with a warning.
 *
 * On code without the policy every write of alice here goes through (the first test fails).
 */
import { describe, expect, it } from 'vitest';
import { useClients } from '../../support/cluster/kube.ts';
import { kubectl } from '../../support/cluster/kubectl.ts';
import {
  inBakeWindow as inBakeWindowOf,
  shopChanges,
  useLockedShops,
} from '../../support/cluster/locked-shop.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import {
  configMap,
  data,
  getTxn,
  lockEntries,
  transaction,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { availableWith } from '../../support/cluster/workloads.ts';
import { eventually } from '../../support/eventually.ts';
import { withController } from '../../support/processes/controller-process.ts';

const clients = useClients();
const shop = useLockedShops(clients);
const inBakeWindow = (ns: string, name: string) => inBakeWindowOf(clients.admin, ns, name);

const asAlice = (args: string[], env: Record<string, string> = {}) =>
  kubectl(clients.kubeconfigs.alice, args, env);

/** `kubectl edit`, with an "editor" that changes the value v2 to v3 in place. */
const EDITOR = { KUBE_EDITOR: "sed -i -e 's/v2/v3/'" };

describe('locks that block', () => {
  it('refuse every write of another user to what a Transaction holds, naming it, and open once it ends', async () => {
    const { namespace: ns, clusterRole } = await shop('locks-deny', 'Deny');
    await clients.admin.create(configMap(ns, 'unrelated', { version: 'v1' }));
    // A dependent the garbage collector must still remove when its owner goes.
    const owner = await clients.admin.create(configMap(ns, 'owner', {}));
    await clients.admin.create({
      ...configMap(ns, 'dependent', { version: 'v1' }),
      metadata: {
        name: 'dependent',
        namespace: ns,
        ownerReferences: [
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid ?? '' },
        ],
      },
    });
    const changes = [
      ...shopChanges({ namespace: ns, clusterRole }),
      {
        target: { apiVersion: 'v1', kind: 'ConfigMap', name: 'dependent' },
        type: 'Patch' as const,
        content: { data: { version: 'v2' } },
      },
    ];

    await withController(
      { kubeconfig: clients.kubeconfigs.controller, namespace: ns, logLevel: 'info' },
      async () => {
        await clients.admin.create(transaction(ns, 'release', changes, { health: { stableFor: '60s' } }));
        await inBakeWindow(ns, 'release');
        expect(Object.keys(await lockEntries(clients.admin, ns)).sort()).toEqual([
          'configmaps/app-config',
          'configmaps/dependent',
          'configmaps/old-config',
          'deployments.apps/web',
          'secrets/app-secret',
        ]);
        expect(Object.keys(await lockEntries(clients.admin, 'janus-system'))).toContain(
          `clusterroles.rbac.authorization.k8s.io/${clusterRole}`,
        );

        const attempts = await Promise.all([
          asAlice(['edit', '-n', ns, 'configmap/app-config'], EDITOR),
          asAlice(['patch', '-n', ns, 'deployment/web', '-p', '{"spec":{"minReadySeconds":1}}']),
          asAlice(['scale', '-n', ns, 'deployment/web', '--replicas=3']),
          asAlice(['delete', '-n', ns, 'secret/app-secret']),
          asAlice(['create', '-n', ns, 'configmap', 'old-config', '--from-literal=version=mine']),
          asAlice(['annotate', `clusterrole/${clusterRole}`, 'shop.example/version=mine', '--overwrite']),
          asAlice(['delete', `clusterrole/${clusterRole}`]),
        ]);
        for (const attempt of attempts) {
          expect(attempt.status, attempt.stdout).not.toBe(0);
          expect(attempt.stderr).toContain(`locked by Transaction ${ns}/release (Verifying)`);
          expect(attempt.stderr).toContain(`janus status release -n ${ns}`);
        }
        // Nothing else is refused: alice may write what the Transaction does not hold.
        const unrelated = await asAlice([
          'patch',
          '-n',
          ns,
          'configmap/unrelated',
          '-p',
          '{"data":{"version":"v2"}}',
        ]);
        expect(unrelated.stderr).toBe('');
        expect(unrelated.status).toBe(0);
        // A dry run changes nothing: it is not refused (a waiting Transaction dry-runs its changes).
        const dryRun = await asAlice([
          'scale',
          '-n',
          ns,
          'deployment/web',
          '--replicas=3',
          '--dry-run=server',
        ]);
        expect(dryRun.status, dryRun.stderr).toBe(0);

        // The break-glass group gets through (here bob, impersonated by the administrator).
        await clients.admin.create({
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'break-glass', namespace: ns },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'edit' },
          subjects: [{ kind: 'Group', name: 'janus:break-glass', apiGroup: 'rbac.authorization.k8s.io' }],
        });
        const breakGlass = await eventually(async () => {
          const result = await kubectl(clients.kubeconfigs.admin, [
            'annotate',
            '-n',
            ns,
            'secret/app-secret',
            'incident.example/ticket=42',
            '--as=bob',
            '--as-group=janus:break-glass',
          ]);
          expect(result.stderr).not.toMatch(/forbidden: User "bob" cannot/);
          return result;
        });
        expect(breakGlass.status, breakGlass.stderr).toBe(0);

        // The garbage collector still collects a locked dependent whose owner is gone.
        await clients.admin.delete({ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', namespace: ns });
        await eventually(async () => expect(await data(clients.admin, ns, 'dependent')).toBeUndefined(), {
          timeoutMs: 60_000,
        });

        // Every attempt was made inside the window: the refusals are the locks', not a race.
        expect((await getTxn(clients.admin, ns, 'release')).status?.phase).toBe('Verifying');

        await waitForPhase(clients.admin, ns, 'release', 'Committed', 150_000);
      },
    );
    // The deployment controller rolled the pods while the Deployment was locked.
    await availableWith(clients.admin, ns, 'web', POD_IMAGES.readyAlternative);
    expect(await data(clients.admin, ns, 'app-config')).toEqual({ version: 'v2' });
    expect(await lockEntries(clients.admin, ns)).toEqual({});
    expect(Object.keys(await lockEntries(clients.admin, 'janus-system'))).not.toContain(
      `clusterroles.rbac.authorization.k8s.io/${clusterRole}`,
    );

    // Committed: every object is open again.
    const after = await Promise.all([
      asAlice(['edit', '-n', ns, 'configmap/app-config'], EDITOR),
      asAlice(['scale', '-n', ns, 'deployment/web', '--replicas=3']),
      asAlice(['delete', '-n', ns, 'secret/app-secret']),
      asAlice(['create', '-n', ns, 'configmap', 'old-config', '--from-literal=version=mine']),
      asAlice(['annotate', `clusterrole/${clusterRole}`, 'shop.example/version=mine', '--overwrite']),
    ]);
    for (const attempt of after) expect(attempt.status, attempt.stderr).toBe(0);
    expect(await data(clients.admin, ns, 'app-config')).toEqual({ version: 'v3' });
  });

  it('in a namespace labelled Warn, let the same writes through with a warning naming the Transaction', async () => {
    const { namespace: ns, clusterRole } = await shop('locks-warn', 'Warn');
    await withController(
      { kubeconfig: clients.kubeconfigs.controller, namespace: ns, logLevel: 'info' },
      async () => {
        const changes = shopChanges({ namespace: ns, clusterRole }).slice(0, 2);
        await clients.admin.create(transaction(ns, 'release', changes, { health: { stableFor: '30s' } }));
        await inBakeWindow(ns, 'release');
        const edit = await asAlice(['edit', '-n', ns, 'configmap/app-config'], EDITOR);
        expect(edit.status, edit.stderr).toBe(0);
        expect(edit.stderr).toMatch(/^Warning: .*locked by Transaction .*\/release \(Verifying\)/m);
        expect((await getTxn(clients.admin, ns, 'release')).status?.phase).toBe('Verifying');
        expect(await data(clients.admin, ns, 'app-config')).toEqual({ version: 'v3' });
        await waitForPhase(clients.admin, ns, 'release', 'Committed', 120_000);
      },
    );
  });
});

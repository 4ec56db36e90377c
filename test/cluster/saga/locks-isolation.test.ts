/**
 * The saga relies on locks that block (docs/security.md, "Locks that block"): in a namespace
 * that opted in, a person's write during the bake window is refused, so the window measures the
 * transaction's own change and its rollback restores what it promised; in one that did not, the
 * same write lands and the rollback ends in a conflict. A controller killed in the window and
 * restarted finishes and opens every object; one gone for good leaves them closed until an
 * administrator runs the documented step (`janus recover --unlock`).
 */
import { describe, expect, it } from 'vitest';
import { PatchType } from '../../../src/kube/client.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { kubectl } from '../../support/cluster/kubectl.ts';
import { inBakeWindow as inBakeWindowOf, useLockedShops } from '../../support/cluster/locked-shop.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import {
  getTxn,
  grantRole,
  lockEntries,
  transaction,
  txnRef,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { newImage } from '../../support/cluster/web-shop.ts';
import { availableWith } from '../../support/cluster/workloads.ts';
import { eventually } from '../../support/eventually.ts';
import { janus } from '../../support/processes/cli.ts';
import { startController, withController } from '../../support/processes/controller-process.ts';

const clients = useClients();
const lockedShop = useLockedShops(clients);
const shop = async (prefix: string, mode: 'Deny' | undefined) => (await lockedShop(prefix, mode)).namespace;
const inBakeWindow = (ns: string, name: string) => inBakeWindowOf(clients.admin, ns, name);

const scaleAsAlice = (ns: string) =>
  kubectl(clients.kubeconfigs.alice, ['scale', '-n', ns, 'deployment/web', '--replicas=3']);

const controllerFor = (ns: string) => ({
  kubeconfig: clients.kubeconfigs.controller,
  namespace: ns,
  logLevel: 'info',
});

describe('the saga with locks that block', () => {
  it("a person's scale in the bake window cannot make the rollback a conflict; without the locks it does", async () => {
    const locked = await shop('isolation-on', 'Deny');
    const open = await shop('isolation-off', undefined);
    const release = (ns: string) =>
      clients.admin.create(
        transaction(ns, 'release', [newImage(POD_IMAGES.flapping)], { health: { stableFor: '2m' } }),
      );

    await withController(controllerFor(locked), async () => {
      await release(locked);
      await inBakeWindow(locked, 'release');
      const refused = await scaleAsAlice(locked);
      expect(refused.status).not.toBe(0);
      expect(refused.stderr).toContain(`locked by Transaction ${locked}/release (Verifying)`);
      const txn = await waitForPhase(clients.admin, locked, 'release', 'RolledBack', 180_000);
      expect(txn.status?.items?.[0]?.rolledBack).toBe(true);
      expect(txn.status?.items?.[0]?.conflict ?? false).toBe(false);
    });
    await availableWith(clients.admin, locked, 'web', POD_IMAGES.ready);
    expect(await lockEntries(clients.admin, locked)).toEqual({});

    await withController(controllerFor(open), async () => {
      await release(open);
      await inBakeWindow(open, 'release');
      const accepted = await scaleAsAlice(open);
      expect(accepted.status, accepted.stderr).toBe(0);
      const txn = await waitForPhase(clients.admin, open, 'release', 'Failed', 180_000);
      expect(txn.status?.conditions?.find((c) => c.type === 'Ready')?.reason).toBe('RollbackConflict');
    });
  });

  it('a controller killed in the bake window keeps the objects closed; restarted, it finishes and opens them', async () => {
    const ns = await shop('isolation-kill', 'Deny');
    const first = await startController(controllerFor(ns));
    try {
      await clients.admin.create(
        transaction(ns, 'release', [newImage(POD_IMAGES.readyAlternative)], { health: { stableFor: '20s' } }),
      );
      await inBakeWindow(ns, 'release');
    } finally {
      await first.kill();
    }
    // Nobody renews the locks now, and still nobody else may write.
    const refused = await scaleAsAlice(ns);
    expect(refused.stderr).toContain(`locked by Transaction ${ns}/release (Verifying)`);

    await withController(controllerFor(ns), async () => {
      await waitForPhase(clients.admin, ns, 'release', 'Committed', 150_000);
    });
    expect(await lockEntries(clients.admin, ns)).toEqual({});
    const accepted = await scaleAsAlice(ns);
    expect(accepted.status, accepted.stderr).toBe(0);
  });

  it('a controller gone for good: janus recover --unlock opens what it held, once its Leases expired', async () => {
    const ns = await shop('isolation-gone', 'Deny');
    const controller = await startController(controllerFor(ns));
    try {
      await clients.admin.create(
        transaction(ns, 'release', [newImage(POD_IMAGES.readyAlternative)], {
          lockTimeout: '10s',
          health: { stableFor: '20m' },
        }),
      );
      await inBakeWindow(ns, 'release');
      // While a controller renews the Leases, --unlock refuses.
      const early = await janus(['recover', 'release', '-n', ns, '--unlock'], {
        kubeconfig: clients.kubeconfigs.admin,
      });
      expect(early.code, early.stderr).toBe(1);
      expect(early.stderr).toContain('a controller still renews its locks');
    } finally {
      await controller.kill();
    }
    expect((await scaleAsAlice(ns)).stderr).toContain(`locked by Transaction ${ns}/release`);

    // Not an administrator: alice, who may read the Transaction, may not open what it holds.
    await grantRole(
      clients.admin,
      ns,
      'alice-transactions',
      [{ apiGroups: ['tx.janus.io'], resources: ['transactions'], verbs: ['get'] }],
      { kind: 'User', name: clients.users.alice, apiGroup: 'rbac.authorization.k8s.io' },
    );
    const notAllowed = await eventually(
      async () => {
        const result = await janus(['recover', 'release', '-n', ns, '--unlock'], {
          kubeconfig: clients.kubeconfigs.alice,
        });
        expect(result.stderr).not.toContain('a controller still renews its locks');
        return result;
      },
      { timeoutMs: 60_000, intervalMs: 1_000 },
    );
    expect(notAllowed.code).toBe(1);
    expect(notAllowed.stderr).toContain(
      `not unlocked in ${ns}: you may not patch locktables.tx.janus.io there`,
    );
    expect((await scaleAsAlice(ns)).stderr).toContain(`locked by Transaction ${ns}/release`);

    const unlocked = await janus(['recover', 'release', '-n', ns, '--unlock'], {
      kubeconfig: clients.kubeconfigs.admin,
    });
    expect(unlocked.code, unlocked.stderr).toBe(0);
    expect(unlocked.stderr).toContain(`${ns}/release: every object it held is open again`);
    expect(await lockEntries(clients.admin, ns)).toEqual({});
    const accepted = await scaleAsAlice(ns);
    expect(accepted.status, accepted.stderr).toBe(0);
    expect((await getTxn(clients.admin, ns, 'release')).status?.phase).toBe('Verifying');
    // No controller will remove its finalizer: let the namespace go.
    await clients.admin.patch(txnRef(ns, 'release'), { metadata: { finalizers: null } }, PatchType.merge);
  });
});

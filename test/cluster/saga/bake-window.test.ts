/**
 * The bake window (spec.health.stableFor) on a control plane that runs workloads: a release whose
 * pods pass their readiness probe and crash-loop ten seconds later (kwok's ":flapping" image) is
 * rolled back inside the window, the reason naming the pod and what it did, while the same
 * rollout without a window commits: the setting is what decides. A healthy release commits once
 * the window has gone by, and shows it counting down meanwhile.
 */
import { describe, expect, it } from 'vitest';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import { getTxn, transaction, waitForPhase } from '../../support/cluster/saga.ts';
import { eventMessage, newImage, webShop, withWebController } from '../../support/cluster/web-shop.ts';
import { availableWith } from '../../support/cluster/workloads.ts';
import { eventually } from '../../support/eventually.ts';

const clients = useClients();

const ready = (txn: Transaction) => txn.status?.conditions?.find((c) => c.type === 'Ready');

/** Waits until the bake window is open: Verifying, stableSince recorded, Ready says Baking. */
function windowOpen(ns: string, name: string) {
  return eventually(
    async () => {
      const txn = await getTxn(clients.admin, ns, name);
      expect(txn.status?.phase).toBe('Verifying');
      expect(txn.status?.health?.stableSince).toBeDefined();
      expect(ready(txn)).toMatchObject({ reason: 'Baking' });
      return txn;
    },
    { timeoutMs: 120_000, intervalMs: 100 },
  );
}

describe('the bake window (health.stableFor)', () => {
  it('rolls back a rollout that is Ready, then crash-loops inside the window, naming the pod', async () => {
    const ns = await webShop(clients, 'bake-flap');
    await withWebController(clients, ns, async () => {
      await clients.admin.create(
        transaction(ns, 'release-v2', [newImage(POD_IMAGES.flapping)], { health: { stableFor: '2m' } }),
      );
      const open = await windowOpen(ns, 'release-v2');
      expect(ready(open)?.message).toMatch(/stable for \d+s of 2m; a regression before 2m rolls back/);

      const txn = await waitForPhase(clients.admin, ns, 'release-v2', 'RolledBack', 180_000);
      const regressed = await eventMessage(clients, ns, 'HealthRegressed');
      expect(regressed).toMatch(/^regressed \d+s into the 2m bake window: Deployment /);
      expect(regressed).toContain(`pod ${ns}/web-`);
      expect(regressed).toContain('container app');
      expect(regressed).toContain('CrashLoopBackOff');
      // Rolled back inside the window: the commit check ended before the window's end.
      const opened = Date.parse(open.status?.health?.stableSince ?? '');
      const commitCheck = open.status?.health;
      expect(commitCheck?.check).toBe('Commit');
      expect(txn.status?.health?.check).toBe('Rollback');
      const rollbackStarted = Date.parse(txn.status?.health?.startedAt ?? '');
      expect(rollbackStarted - opened).toBeLessThan(120_000);
      await availableWith(clients.admin, ns, 'web', POD_IMAGES.ready);
    });
  });

  it('the same rollout with stableFor 0s commits at the first healthy look: the setting decides', async () => {
    const ns = await webShop(clients, 'bake-zero');
    await withWebController(clients, ns, async () => {
      await clients.admin.create(
        transaction(ns, 'release-v2', [newImage(POD_IMAGES.flapping)], { health: { stableFor: '0s' } }),
      );
      const txn = await waitForPhase(clients.admin, ns, 'release-v2', 'Committed', 120_000);
      expect(txn.status?.health?.result).toBe('Healthy');
      expect(txn.status?.health?.stableSince).toBeUndefined();
    });
  });

  it('commits a healthy rollout once the window has gone by, counting down meanwhile', async () => {
    const ns = await webShop(clients, 'bake-ok');
    await withWebController(clients, ns, async () => {
      await clients.admin.create(
        transaction(ns, 'release-v2', [newImage(POD_IMAGES.readyAlternative)], {
          health: { stableFor: '15s' },
        }),
      );
      const open = await windowOpen(ns, 'release-v2');
      expect(open.status?.items?.[0]?.health).toMatchObject({ status: 'Current', restarts: 0 });
      const txn = await waitForPhase(clients.admin, ns, 'release-v2', 'Committed', 120_000);
      expect(txn.status?.health?.result).toBe('Healthy');
      expect(txn.status?.health?.message).toMatch(
        /^1 target\(s\) healthy and stable for 15s \(after \d+s\)$/,
      );
      const stableSince = Date.parse(txn.status?.health?.stableSince ?? '');
      expect(Date.parse(txn.status?.health?.completedAt ?? '') - stableSince).toBeGreaterThanOrEqual(15_000);
    });
  });
});

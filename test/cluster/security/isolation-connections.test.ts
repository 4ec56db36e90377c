/**
 * Issue 21, finding 3: one tenant's gated rollouts must not stall the controller for the others.
 * Each rollout the health gate follows used to hold up to three watch streams, each a socket of
 * the one pool (64) that every request shared; 30 Deployments verifying at once took all of it,
 * and status writes, dry runs and leader renewals queued behind the watches for minutes.
 *
 * Here one team creates 30 Deployments whose pods never get Ready (health.timeout 5m, so all
 * wait in Verifying for the whole test) and cancels one of them with a 40 KB reason (finding 4:
 * that status write used to be refused forever, with the locks held), while another team's
 * one-ConfigMap transaction must commit promptly, and the controller's leader Lease must be
 * renewed throughout.
 *
 * The controller reconciles one namespace (tests run side by side on one control plane); the
 * stall came from the shared connection pool, which every namespace shares alike.
 */
import { describe, expect, it } from 'vitest';
import { ANNOTATION_CANCEL, type Change } from '../../../src/api/v1alpha1/index.ts';
import { PatchType } from '../../../src/kube/client.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import {
  cmTarget,
  configMap,
  getTxn,
  serviceAccount,
  testNamespace,
  transaction,
  txnRef,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { deployment } from '../../support/cluster/workloads.ts';
import { eventually } from '../../support/eventually.ts';
import { withController } from '../../support/processes/controller-process.ts';

const clients = useClients();

const GATED = 30;
/** Far below the stall (minutes), far above a commit on a loaded 2-core machine (seconds). */
const PROMPT_MS = 60_000;
/** The leader's Lease duration (the controller's default, passed explicitly). */
const LEASE_DURATION_MS = 15_000;
/** Renewals to see with all the rollouts in Verifying: about 30 s at one per 2 s. */
const RENEWALS = 15;

interface LeaseSpec {
  holderIdentity?: string;
  renewTime?: string;
}

describe('one tenant gated rollouts beside another tenant', () => {
  it('a one-ConfigMap transaction commits promptly and the leader keeps its Lease while 30 rollouts wait in Verifying', async () => {
    const ns = await testNamespace(clients.admin, 'iso-conn', {
      deployer: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] }],
    });
    // The other tenant: its own ServiceAccount, which may only touch its ConfigMap.
    await serviceAccount(clients.admin, ns, 'other-team', [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['*'], resourceNames: ['other-config'] },
    ]);
    await clients.admin.create(configMap(ns, 'other-config', { release: 'v1' }));
    const leaseRef = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      name: `janus-${ns}`,
      namespace: 'janus-system',
    };

    await withController(
      {
        kubeconfig: clients.kubeconfigs.controller,
        namespace: ns,
        logLevel: 'info',
        extraArgs: [
          '--leader-elect',
          `--leader-election-id=janus-${ns}`,
          `--leader-lease-duration=${LEASE_DURATION_MS / 1000}s`,
          '--leader-renew-deadline=10s',
          '--leader-retry-period=2s',
        ],
      },
      async (controller) => {
        await eventually(async () => expect(await controller.logs()).toContain('"msg":"started leading"'));

        // Sample the leader Lease's renewals for the whole test, from outside.
        const renewals: number[] = [];
        let sampling = true;
        const sampler = (async () => {
          while (sampling) {
            const lease = await clients.admin.find(leaseRef);
            const renewTime = (lease as { spec?: LeaseSpec } | undefined)?.spec?.renewTime;
            const at = renewTime ? Date.parse(renewTime) : Number.NaN;
            if (Number.isFinite(at) && renewals.at(-1) !== at) renewals.push(at);
            await new Promise((r) => setTimeout(r, 500));
          }
        })();

        try {
          const rollouts: Change[][] = Array.from({ length: GATED }, (_, i) => [
            {
              target: { apiVersion: 'apps/v1', kind: 'Deployment', name: `web-${i}` },
              type: 'Create',
              content: { spec: deployment(ns, `web-${i}`, POD_IMAGES.neverReady, { replicas: 1 }).spec },
            },
          ]);
          await Promise.all(
            rollouts.map((changes, i) =>
              clients.admin.create(transaction(ns, `rollout-${i}`, changes, { health: { timeout: '5m' } })),
            ),
          );
          // Most of them verifying: the gate holds its watches (the stall began at about 21).
          await eventually(
            async () => {
              const phases = await Promise.all(
                rollouts.map(async (_, i) => (await getTxn(clients.admin, ns, `rollout-${i}`)).status?.phase),
              );
              expect(phases.filter((p) => p === 'Verifying').length).toBeGreaterThanOrEqual(20);
            },
            { timeoutMs: 180_000, intervalMs: 1_000 },
          );

          const phases = await Promise.all(
            rollouts.map(async (_, i) => (await getTxn(clients.admin, ns, `rollout-${i}`)).status?.phase),
          );
          process.stderr.write(
            `gated rollouts when the other team's transaction is created: ${phases.join(' ')}\n`,
          );
          // The busy team also cancels one rollout with a reason far beyond what status can hold.
          await clients.admin.patch(
            txnRef(ns, 'rollout-0'),
            { metadata: { annotations: { [ANNOTATION_CANCEL]: `stop: ${'x'.repeat(40 * 1024)}` } } },
            PatchType.merge,
          );
          const started = Date.now();
          await clients.admin.create(
            transaction(
              ns,
              'other-release',
              [{ target: cmTarget('other-config'), type: 'Patch', content: { data: { release: 'v2' } } }],
              { serviceAccountName: 'other-team' },
            ),
          );
          await waitForPhase(clients.admin, ns, 'other-release', 'Committed', PROMPT_MS);
          const tookMs = Date.now() - started;
          process.stderr.write(`the other team's transaction: created → Committed in ${tookMs} ms\n`);
          expect(tookMs).toBeLessThan(PROMPT_MS);

          // The cancelled one is rolled back with its locks released; every other rollout reaches
          // Verifying: none is left stuck in Committing behind the others.
          await waitForPhase(clients.admin, ns, 'rollout-0', 'RolledBack', PROMPT_MS);
          await eventually(
            async () => {
              for (let i = 1; i < GATED; i++)
                expect((await getTxn(clients.admin, ns, `rollout-${i}`)).status?.phase).toBe('Verifying');
            },
            { timeoutMs: 120_000, intervalMs: 1_000 },
          );
          // And they stay there while the leader renews its Lease many times over (a stalled
          // pool showed within a minute: the old code lost the Lease within 30 s).
          const seen = renewals.length;
          await eventually(() => expect(renewals.length - seen).toBeGreaterThanOrEqual(RENEWALS), {
            timeoutMs: RENEWALS * LEASE_DURATION_MS,
            intervalMs: 1_000,
          });
        } finally {
          sampling = false;
          await sampler;
        }
        renewals.push(Date.now());

        // The leader renewed its Lease throughout (up to the end: the last point is now): never a
        // gap a standby would take over in.
        const gaps = renewals.slice(1).map((at, i) => at - (renewals[i] as number));
        process.stderr.write(
          `leader Lease: ${renewals.length - 1} renewals, longest gap ${Math.max(...gaps)} ms\n`,
        );
        expect(renewals.length).toBeGreaterThan(2);
        expect(Math.max(...gaps)).toBeLessThan(LEASE_DURATION_MS);
        expect(await controller.logs()).not.toContain('"msg":"stopped leading"');
      },
    );
  }, 900_000);
});

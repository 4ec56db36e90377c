/**
 * Two installations of Janus in one cluster (issue 21, finding 10): each owns the Transactions
 * labelled with its instance (tx.janus.io/instance; the default installation those without the
 * label), never touches another's, and leads under a Lease of its own, so two in one controller
 * namespace both lead at once. The label is chosen at creation and the API server refuses to
 * change it (manifests/policy/transaction-instance.yaml). Controllers run as processes, as the
 * controller identity of manifests/; each test chooses their instances (test/support/cluster/instance.ts).
 *
 * Issue 34, round 4, item 3: two installations of one instance in different namespaces (each with
 * its own leader Lease) both drove the same Transactions, the one a namespace did not let in
 * failing them (NamespaceNotGranted). A second installation's operator, with the shipped RBAC in a
 * namespace of its own, now cannot start one beside the first: it exits naming the first
 * (InstanceClaim). A Transaction another live installation wrote is marked and not driven, and
 * taken over once that one is gone. The first installation's Transactions commit meanwhile.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LABEL_INSTANCE } from '../../../src/api/v1alpha1/index.ts';
import { cursorConfigMapName } from '../../../src/gitops/state.ts';
import { KubeClient, PatchType } from '../../../src/kube/client.ts';
import { CORE_MAPPINGS, Discovery, Objects } from '../../../src/kube/resources.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { refusal } from '../../support/cluster/refusal.ts';
import {
  ALL_ON_CONFIGMAPS,
  cmTarget,
  getTxn,
  grantRole,
  testNamespace,
  transaction,
  txnRef,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { type SecondInstallation, secondInstallation } from '../../support/cluster/second-installation.ts';
import { eventually } from '../../support/eventually.ts';
import { ScratchWorkTree } from '../../support/git/git-server.ts';
import { type ControllerProcess, startController } from '../../support/processes/controller-process.ts';
import { configMapYaml, createTestRepo, useGitServer, useJanus } from '../gitops/harness.ts';

const clients = useClients();
const git = useGitServer();
const janus = useJanus(clients);
const CONTROLLER_NAMESPACE = 'janus-system';

const createConfigMap = (name: string) => [
  { target: cmTarget(name), type: 'Create' as const, content: { data: { a: '1' } } },
];

/** Fast leader election, so both installations lead within seconds. */
const ELECTION = [
  '--leader-lease-duration',
  '3s',
  '--leader-renew-deadline',
  '2s',
  '--leader-retry-period',
  '500ms',
];

/** janus_leader of a controller's own Lease (its label `lease`: namespace/name). */
async function leaderGauge(controller: ControllerProcess, lease: string): Promise<number> {
  const text = await (await fetch(`${await controller.opsUrl()}/metrics`)).text();
  const line = `janus_leader{lease="${CONTROLLER_NAMESPACE}/${lease}"} `;
  const found = text.split('\n').find((l) => l.startsWith(line));
  return found === undefined ? Number.NaN : Number(found.slice(line.length));
}

describe('two installations in one cluster', () => {
  it('each reconciles only its own Transactions, and both lead at once under Leases of their own', async () => {
    const ns = await testNamespace(clients.admin, 'inst', { deployer: [ALL_ON_CONFIGMAPS] });
    const suffix = randomBytes(3).toString('hex');
    const [a, b] = [`a-${suffix}`, `b-${suffix}`];
    // Created before either controller starts: both LISTs would return all three if unfiltered.
    await clients.admin.create(transaction(ns, 'for-a', createConfigMap('made-by-a'), { instance: a }));
    await clients.admin.create(transaction(ns, 'for-b', createConfigMap('made-by-b'), { instance: b }));
    await clients.admin.create(
      transaction(ns, 'for-default', createConfigMap('made-by-default'), { instance: null }),
    );

    const start = (instance: string) =>
      startController({
        kubeconfig: clients.kubeconfigs.controller,
        namespace: ns,
        instance,
        extraArgs: ['--leader-elect', ...ELECTION],
      });
    const controllerA = await start(a);
    const controllerB = await start(b);
    try {
      await waitForPhase(clients.admin, ns, 'for-a', 'Committed');
      await waitForPhase(clients.admin, ns, 'for-b', 'Committed');

      // Neither touched the Transaction of the default installation (which does not run here):
      // no finalizer, no status, nothing it would have created.
      const unowned = await getTxn(clients.admin, ns, 'for-default');
      expect(unowned.metadata.finalizers ?? []).toEqual([]);
      expect(unowned.status?.phase).toBeUndefined();
      expect(
        await clients.admin.find({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          namespace: ns,
          name: 'made-by-default',
        }),
      ).toBeUndefined();
      // And neither ever requested the other's: every request is in their debug logs.
      const [logA, logB] = [await controllerA.logs(), await controllerB.logs()];
      expect(logA).not.toMatch(/transactions\/for-(b|default)\b/);
      expect(logB).not.toMatch(/transactions\/for-(a|default)\b/);
      expect(logA).toMatch(/transactions\/for-a\b/);
      expect(logB).toMatch(/transactions\/for-b\b/);
      // Both lead, each under its own Lease (janus-controller-<instance>), held by different pods.
      const leases = await eventually(async () => {
        const found = await Promise.all(
          [a, b].map((instance) =>
            clients.admin.get({
              apiVersion: 'coordination.k8s.io/v1',
              kind: 'Lease',
              namespace: CONTROLLER_NAMESPACE,
              name: `janus-controller-${instance}`,
            }),
          ),
        );
        expect(await leaderGauge(controllerA, `janus-controller-${a}`)).toBe(1);
        expect(await leaderGauge(controllerB, `janus-controller-${b}`)).toBe(1);
        return found;
      });
      const holders = leases.map((l) => (l.spec as { holderIdentity?: string }).holderIdentity);
      expect(holders[0]).toBeTruthy();
      expect(holders[1]).toBeTruthy();
      expect(holders[0]).not.toBe(holders[1]);
    } catch (error) {
      console.error(`--- controller a ---\n${(await controllerA.logs()).slice(-10_000)}`);
      console.error(`--- controller b ---\n${(await controllerB.logs()).slice(-10_000)}`);
      throw error;
    } finally {
      await controllerA.stop();
      await controllerB.stop();
    }
  });

  it('refuses to move a Transaction to another installation, or to take it from one', async () => {
    const ns = await testNamespace(clients.admin, 'inst-move', { deployer: [ALL_ON_CONFIGMAPS] });
    // A tenant who may write Transactions in her namespace (kubectl label is a patch).
    await grantRole(
      clients.admin,
      ns,
      'txn-editor',
      [{ apiGroups: ['tx.janus.io'], resources: ['transactions'], verbs: ['get', 'patch', 'update'] }],
      { apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: clients.users.alice },
    );
    await clients.admin.create(transaction(ns, 'owned', createConfigMap('x'), { instance: 'team-a' }));
    await clients.admin.create(transaction(ns, 'default-owned', createConfigMap('y'), { instance: null }));
    const relabel = (name: string, value: string | null) =>
      clients.alice.patch(
        txnRef(ns, name),
        { metadata: { labels: { [LABEL_INSTANCE]: value } } },
        PatchType.merge,
      );

    const moved = await refusal(relabel('owned', 'team-b'));
    expect(moved.status).toBe(422);
    expect(moved.serverMessage).toContain(
      `the label ${LABEL_INSTANCE} of Transaction ${ns}/owned cannot change (from "team-a" to "team-b")`,
    );
    const dropped = await refusal(relabel('owned', null));
    expect(dropped.serverMessage).toContain('(from "team-a" to (none))');
    const taken = await refusal(relabel('default-owned', 'team-b'));
    expect(taken.serverMessage).toContain('(from (none) to "team-b")');
    expect((await getTxn(clients.admin, ns, 'owned')).metadata.labels?.[LABEL_INSTANCE]).toBe('team-a');
    expect(
      (await getTxn(clients.admin, ns, 'default-owned')).metadata.labels?.[LABEL_INSTANCE],
    ).toBeUndefined();
    // Other labels stay the tenant's to change.
    await clients.alice.patch(
      txnRef(ns, 'owned'),
      { metadata: { labels: { team: 'shop' } } },
      PatchType.merge,
    );
  });

  it('labels what janus run materializes with its instance, whatever transaction.yaml says, and keeps its own cursor', async () => {
    const ns = await testNamespace(clients.admin, 'inst-git', { deployer: [ALL_ON_CONFIGMAPS] });
    const instance = `git-${randomBytes(3).toString('hex')}`;
    const repo = await createTestRepo(git.server);
    await janus.start({ repo: repo.url, namespace: ns, instance });

    const user = await ScratchWorkTree.clone(repo.bare);
    // A directory that tries to hand itself to another installation.
    await user.write({
      'transactions/hop/transaction.yaml':
        `apiVersion: tx.janus.io/v1alpha1\nkind: Transaction\nmetadata:\n  name: hop\n  namespace: ${ns}\n` +
        `  labels:\n    ${LABEL_INSTANCE}: elsewhere\n    team: shop\n` +
        'spec:\n  serviceAccountName: deployer\n  timeout: 2m\n',
      'transactions/hop/10-app.create.yaml': configMapYaml('hop', { v: '1' }),
    });
    await user.commit('hop');
    await user.push('main');
    await user.dispose();

    const txn = await waitForPhase(clients.admin, ns, 'hop', 'Committed');
    expect(txn.metadata.labels).toEqual({ [LABEL_INSTANCE]: instance, team: 'shop' });
    // Its cursor is its own: another installation watching the same repository does not share it.
    const source = { repository: repo.url, branch: 'main', root: 'transactions' };
    // Saved once the poll that created the Transaction ends, which may be after it committed.
    await eventually(async () =>
      expect(
        await clients.admin.find({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          namespace: CONTROLLER_NAMESPACE,
          name: cursorConfigMapName({ ...source, instance }),
        }),
      ).toBeDefined(),
    );
    expect(cursorConfigMapName({ ...source, instance })).not.toBe(cursorConfigMapName(source));
  });
});

/** The InstanceClaim `name`, if there is one. */
const claimOf = (name: string) =>
  clients.admin.find<{
    apiVersion: string;
    kind: string;
    metadata: { name: string };
    spec: { controllerNamespace: string };
  }>({
    apiVersion: 'tx.janus.io/v1alpha1',
    kind: 'InstanceClaim',
    name,
  });

/**
 * A controller of `instance` in `second`'s namespace, as its identity, watching `watch` (all if
 * undefined). The two installations of each test share an instance of their own, the first's:
 * the one named after the namespace it watches (test/support/cluster/instance.ts).
 */
const startSecond = (second: SecondInstallation, instance: string, watch: string | undefined) =>
  startController({
    kubeconfig: second.kubeconfig,
    controllerNamespace: second.namespace,
    instance,
    ...(watch && { namespace: watch }),
    logLevel: 'info',
  });

/** Waits until the controller reports itself ready (it leads: its Transactions are reconciled). */
const readyz = (controller: ControllerProcess) =>
  eventually(async () => expect((await fetch(`${await controller.opsUrl()}/readyz`)).status).toBe(200));

/** janus_installation_conflicts_total of a controller. */
async function conflictsCounted(controller: ControllerProcess): Promise<number> {
  const text = await (await fetch(`${await controller.opsUrl()}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('janus_installation_conflicts_total '));
  return line === undefined ? Number.NaN : Number(line.split(' ')[1]);
}

describe('two installations of one instance in different namespaces', () => {
  it('the second refuses to start where the first serves, naming it; beside it, on a namespace of its own, it starts', async () => {
    const ns = await testNamespace(clients.admin, 'inst-claim', { deployer: [ALL_ON_CONFIGMAPS] });
    const elsewhere = await testNamespace(clients.admin, 'inst-claim-else');
    const second = await secondInstallation(clients.admin, clients.kubeconfigs.admin);
    const first = await startController({
      kubeconfig: clients.kubeconfigs.controller,
      namespace: ns,
      logLevel: 'info',
    });
    const started: ControllerProcess[] = [first];
    try {
      await readyz(first);
      // The same namespace, and every namespace (which includes it): both refused at start.
      for (const watch of [ns, undefined]) {
        const refused = await startSecond(second, ns, watch);
        started.push(refused);
        const exited = await eventually(
          async () => {
            expect(refused.child.exitCode).not.toBeNull();
            return refused.child.exitCode;
          },
          { timeoutMs: 60_000 },
        );
        expect(exited).toBe(1);
        const log = await refused.logs();
        expect(log).toContain(
          `instance "${ns}" is served, for namespace "${ns}", by the installation in namespace "${CONTROLLER_NAMESPACE}" (InstanceClaim janus-${ns}.${ns}`,
        );
        expect(log).toContain(`this installation, in namespace "${second.namespace}"`);
        expect(log).toContain('--instance, JANUS_INSTANCE, Helm value instance');
      }
      expect((await claimOf(`janus-${ns}.${ns}`))?.spec.controllerNamespace).toBe(CONTROLLER_NAMESPACE);
      // The first's Transaction commits, driven by it alone.
      await clients.admin.create(transaction(ns, 'served', createConfigMap('served')));
      const served = await waitForPhase(clients.admin, ns, 'served', 'Committed', 30_000);
      expect(served.status?.installation).toBe(CONTROLLER_NAMESPACE);
      // On a namespace the first does not watch, the second installation starts and claims it.
      const beside = await startSecond(second, ns, elsewhere);
      started.push(beside);
      await eventually(async () =>
        expect((await claimOf(`janus-${ns}.${elsewhere}`))?.spec.controllerNamespace).toBe(second.namespace),
      );
      expect(beside.child.exitCode).toBeNull();
    } catch (error) {
      for (const p of started) console.error(`--- ${p.logFile} ---\n${(await p.logs()).slice(-5_000)}`);
      throw error;
    } finally {
      for (const p of started) await p.stop();
    }
    // Stopped, each released its claim: a successor need not wait for the lease to run out.
    expect(await claimOf(`janus-${ns}.${ns}`)).toBeUndefined();
    expect(await claimOf(`janus-${ns}.${elsewhere}`)).toBeUndefined();
  });

  it('a claim taken over by hand is not taken silently: its installation stops, saying who holds it', async () => {
    const ns = await testNamespace(clients.admin, 'inst-taken');
    const first = await startController({
      kubeconfig: clients.kubeconfigs.controller,
      namespace: ns,
      logLevel: 'info',
    });
    try {
      const claim = await eventually(async () => {
        const found = await claimOf(`janus-${ns}.${ns}`);
        expect(found?.spec.controllerNamespace).toBe(CONTROLLER_NAMESPACE);
        return found;
      });
      if (!claim) throw new Error('unreachable');
      // As code that skips the check would: the claim rewritten for another namespace, fresh.
      await clients.admin.replace({
        ...claim,
        spec: {
          ...claim.spec,
          controllerNamespace: 'elsewhere',
          holderIdentity: 'intruder',
          renewTime: new Date().toISOString(),
        },
      });
      // At its next renewal (every 20 s) the first finds it and stops, exit status 1.
      const code = await eventually(
        async () => {
          expect(first.child.exitCode).not.toBeNull();
          return first.child.exitCode;
        },
        { timeoutMs: 60_000 },
      );
      expect(code).toBe(1);
      expect(await first.logs()).toContain(
        `by the installation in namespace "elsewhere" (InstanceClaim janus-${ns}.${ns}, held by intruder`,
      );
    } finally {
      await first.stop();
      await clients.admin
        .delete({ apiVersion: 'tx.janus.io/v1alpha1', kind: 'InstanceClaim', name: `janus-${ns}.${ns}` })
        .catch(() => {});
    }
  });

  it('a Transaction another live installation wrote is marked, counted and not driven; once that one is gone, taken over', async () => {
    const ns = await testNamespace(clients.admin, 'inst-stamp', { deployer: [ALL_ON_CONFIGMAPS] });
    const elsewhere = await testNamespace(clients.admin, 'inst-stamp-else');
    const second = await secondInstallation(clients.admin, clients.kubeconfigs.admin);
    // The second installation, legitimately on a namespace of its own, writes a status in the first's.
    const secondController = await startSecond(second, ns, elsewhere);
    const secondClient = await KubeClient.load({ kubeconfig: second.kubeconfig });
    const discovery = new Discovery(secondClient);
    for (const m of CORE_MAPPINGS) discovery.seed(m);
    const asSecond = new Objects(secondClient, discovery);
    let first: ControllerProcess | undefined;
    try {
      await readyz(secondController);
      await clients.admin.create(transaction(ns, 'contested', createConfigMap('contested')));
      await asSecond.patch(
        txnRef(ns, 'contested'),
        { status: { phase: 'Pending', installation: second.namespace } },
        PatchType.merge,
        { subresource: 'status' },
      );
      first = await startController({
        kubeconfig: clients.kubeconfigs.controller,
        namespace: ns,
        logLevel: 'info',
      });
      const marked = await eventually(async () => {
        const txn = await getTxn(clients.admin, ns, 'contested');
        const conflict = txn.status?.conditions?.find((c) => c.type === 'InstallationConflict');
        expect(conflict).toMatchObject({ status: 'True', reason: 'WrittenByAnotherInstallation' });
        return { txn, conflict };
      });
      expect(marked.conflict?.message).toContain(
        `written by the installation in namespace "${second.namespace}"`,
      );
      expect(marked.txn.status?.phase).toBe('Pending');
      expect(await conflictsCounted(first)).toBe(1);
      const events = await clients.admin.list('v1', 'Event', ns);
      expect(events.items.map((e) => (e as { reason?: string }).reason)).toContain('InstallationConflict');
      // A neighbour's Transaction beside it commits promptly.
      await clients.admin.create(transaction(ns, 'beside', createConfigMap('beside')));
      await waitForPhase(clients.admin, ns, 'beside', 'Committed', 30_000);
      // Still not driven.
      expect((await getTxn(clients.admin, ns, 'contested')).status?.phase).toBe('Pending');
      expect(
        await clients.admin.find({ apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, name: 'contested' }),
      ).toBeUndefined();

      // The second installation stops (its claim goes with it): the first takes the Transaction over.
      await secondController.stop();
      const taken = await waitForPhase(clients.admin, ns, 'contested', 'Committed', 90_000);
      expect(taken.status?.installation).toBe(CONTROLLER_NAMESPACE);
      expect(taken.status?.conditions?.find((c) => c.type === 'InstallationConflict')).toBeUndefined();
    } catch (error) {
      for (const p of [secondController, first]) {
        if (p) console.error(`--- ${p.logFile} ---\n${(await p.logs()).slice(-5_000)}`);
      }
      throw error;
    } finally {
      await first?.stop();
      await secondController.stop();
      await secondClient.connection.close();
    }
  });
});

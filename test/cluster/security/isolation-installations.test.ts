/**
 * Two installations of Janus in one cluster (issue 21, finding 10): each owns the Transactions
 * labelled with its instance (tx.janus.io/instance; the default installation those without the
 * label), never touches another's, and leads under a Lease of its own, so two in one controller
 * namespace both lead at once. The label is chosen at creation and the API server refuses to
 * change it (manifests/policy/transaction-instance.yaml). Controllers run as processes, as the
 * controller identity of manifests/; the instance is given by JANUS_INSTANCE.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LABEL_INSTANCE, type Transaction } from '../../../src/api/v1alpha1/index.ts';
import { cursorConfigMapName } from '../../../src/gitops/state.ts';
import { PatchType } from '../../../src/kube/client.ts';
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

function labelled(txn: Transaction, instance: string | undefined): Transaction {
  if (instance === undefined) return txn;
  return { ...txn, metadata: { ...txn.metadata, labels: { [LABEL_INSTANCE]: instance } } };
}

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
    await clients.admin.create(labelled(transaction(ns, 'for-a', createConfigMap('made-by-a')), a));
    await clients.admin.create(labelled(transaction(ns, 'for-b', createConfigMap('made-by-b')), b));
    await clients.admin.create(transaction(ns, 'for-default', createConfigMap('made-by-default')));

    const start = (instance: string) =>
      startController({
        kubeconfig: clients.kubeconfigs.controller,
        namespace: ns,
        extraArgs: ['--leader-elect', ...ELECTION],
        env: { JANUS_INSTANCE: instance },
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
    await clients.admin.create(labelled(transaction(ns, 'owned', createConfigMap('x')), 'team-a'));
    await clients.admin.create(transaction(ns, 'default-owned', createConfigMap('y')));
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
    await janus.start({ repo: repo.url, namespace: ns, env: { JANUS_INSTANCE: instance } });

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

/**
 * A ROLLBACK file rolls back only the Transaction its own directory created. Tried as a Git pusher
 * who may also push the results branch (the docs let others add commits there), against the
 * shipped manifests and `janus run`: a forged record plus an inert-looking directory, aimed at a
 * namespace the repository may not use or at a tenant's own Transaction; and, without forging
 * anything, an old directory's ROLLBACK after retention freed its name for a namesake.
 */
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { Transaction } from '../../../src/api/v1alpha1/index.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  cmTarget,
  configMap,
  getTxn,
  serviceAccount,
  testNamespace,
  transaction,
  txnRef,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { withController } from '../../support/processes/controller-process.ts';
import {
  configMapYaml,
  createTestRepo,
  directory,
  RESULTS,
  type TestRepo,
  useGitServer,
  useJanus,
} from '../gitops/harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'rbrec');
const git = useGitServer();
const janus = useJanus(clients);

const REQUEST_ROLLBACK = 'tx.janus.io/request-rollback';

/** A result file as Janus writes one, claiming that this repository's directory created `txn`. */
function forgedRecord(repo: TestRepo, txn: Transaction): Record<string, string> {
  const { namespace = '', name, uid } = txn.metadata;
  const record = {
    apiVersion: 'tx.janus.io/v1alpha1',
    kind: 'TransactionResult',
    transaction: { namespace, name, uid },
    phase: 'Committed',
    progress: '1/1',
    source: { repository: repo.url, revision: `main@sha1:${'0'.repeat(40)}`, path: `transactions/${name}` },
  };
  return { [`results/${namespace}/${name}.yaml`]: stringify(record) };
}

/** A tenant's own Transaction (not from Git), taken to Committed. */
async function tenantsTransaction(namespace: string, name: string): Promise<Transaction> {
  await clients.admin.create(configMap(namespace, `${name}-cm`, { v: '1' }));
  await clients.admin.create(
    transaction(namespace, name, [
      { target: cmTarget(`${name}-cm`), type: 'Patch', content: { data: { v: 'tenant' } } },
    ]),
  );
  return waitForPhase(clients.admin, namespace, name, 'Committed');
}

/**
 * Waits until the ROLLBACK file has been acted on, one way or the other: a rollback requested of
 * `name`, or a notice about it on the results branch. Returns the notice's subject, if any.
 */
async function outcomeOfRollback(repo: TestRepo, namespace: string, name: string): Promise<string> {
  return eventually(
    async () => {
      const txn = await getTxn(clients.admin, namespace, name);
      const requested = txn.metadata.annotations?.[REQUEST_ROLLBACK];
      if (requested !== undefined) return `rollback requested of ${txn.metadata.uid}: ${requested}`;
      // A controller may have consumed the request already.
      const phase = txn.status?.phase;
      if (phase === 'RollingBack' || phase === 'RolledBack') return `${txn.metadata.uid} is ${phase}`;
      const notice = (await repo.subjects()).find((s) => s.startsWith(`${namespace}/${name}: rollback`));
      if (notice) return notice;
      throw new Error('the ROLLBACK file has not been acted on yet');
    },
    { timeoutMs: 90_000 },
  );
}

describe('a results-branch record never authorizes a rollback on its own', () => {
  it('refuses a forged record plus a directory for a namespace the repository may not use', async () => {
    const victimNs = await testNamespace(clients.admin, 'rbrec-victim', { deployer: [ALL_ON_CONFIGMAPS] });
    try {
      const victim = await withController(
        { kubeconfig: clients.kubeconfigs.controller, namespace: victimNs },
        () => tenantsTransaction(victimNs, 'payments'),
      );
      await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
      const repo = await createTestRepo(git.server);
      await janus.start({ repo: repo.url, namespace: ns.name });

      await repo.push(forgedRecord(repo, victim), 'an ordinary-looking result', RESULTS);
      await repo.push(
        directory('payments', {
          namespace: victimNs,
          changes: { '10-noop.patch.yaml': configMapYaml('payments-cm', { v: '1' }) },
          extra: { ROLLBACK: 'cleanup' },
        }),
        'housekeeping',
      );

      expect(await outcomeOfRollback(repo, victimNs, 'payments')).toBe(
        `${victimNs}/payments: rollback refused (outside the policy)`,
      );
      const after = await getTxn(clients.admin, victimNs, 'payments');
      expect(after.status?.phase).toBe('Committed');
      expect(after.metadata.annotations?.[REQUEST_ROLLBACK]).toBeUndefined();
      expect(await repo.log()).toContain(`namespace "${victimNs}" is not allowed for this repository`);
    } finally {
      await clients.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: victimNs });
    }
  });

  it("refuses a forged record naming a tenant's own Transaction in an allowed namespace", async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    const repo = await createTestRepo(git.server);
    await janus.start({ repo: repo.url, namespace: ns.name });
    const tenants = await tenantsTransaction(ns.name, 'checkout');

    await repo.push(forgedRecord(repo, tenants), 'an ordinary-looking result', RESULTS);
    await repo.push(
      directory('checkout', {
        changes: { '10-noop.patch.yaml': configMapYaml('checkout-cm', { v: '1' }) },
        extra: { ROLLBACK: 'cleanup' },
      }),
      'housekeeping',
    );

    expect(await outcomeOfRollback(repo, ns.name, 'checkout')).toBe(
      `${ns.name}/checkout: rollback refused (not created here)`,
    );
    const after = await getTxn(clients.admin, ns.name, 'checkout');
    expect(after.status?.phase).toBe('Committed');
    expect(after.metadata.annotations?.[REQUEST_ROLLBACK]).toBeUndefined();
    expect(await repo.log()).toContain(
      'from no transaction directory) is not the one this directory created',
    );
  });

  it('leaves alone the namesake created after retention freed the name of an applied directory', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    const repo = await createTestRepo(git.server);
    await janus.start({ repo: repo.url, namespace: ns.name });
    await repo.push(
      directory('release', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }),
    );
    const applied = await waitForPhase(clients.admin, ns.name, 'release', 'Committed');
    await eventually(async () => {
      const recorded = (await repo.result(ns.name, 'release')) as { phase?: string } | undefined;
      if (recorded?.phase !== 'Committed') throw new Error(`recorded: ${recorded?.phase}`);
    });
    // Retention deletes the finished Transaction; the tenant creates one of the same name.
    await clients.admin.delete(txnRef(ns.name, 'release'));
    await eventually(async () => {
      if (await clients.admin.find(txnRef(ns.name, 'release'))) throw new Error('not deleted yet');
    });
    const namesake = await tenantsTransaction(ns.name, 'release');
    expect(namesake.metadata.uid).not.toBe(applied.metadata.uid);

    await repo.push({ 'transactions/release/ROLLBACK': 'release broke checkout' }, 'roll back release');

    expect(await outcomeOfRollback(repo, ns.name, 'release')).toBe(
      `${ns.name}/release: rollback refused (not created here)`,
    );
    const after = await getTxn(clients.admin, ns.name, 'release');
    expect(after.status?.phase).toBe('Committed');
    expect(after.metadata.annotations?.[REQUEST_ROLLBACK]).toBeUndefined();
    expect(await repo.log()).toContain(`is not the one this directory created (uid ${applied.metadata.uid})`);
  });
});

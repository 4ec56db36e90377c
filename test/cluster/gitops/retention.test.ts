/**
 * Exactly-once with a pruned history: janus run prunes the Transactions it applied (their
 * outcomes pushed first), then a restart that lost its cursor re-reads the whole branch and
 * applies nothing again: the results branch, not the Transactions, is what it relies on.
 */
import { describe, expect, it } from 'vitest';
import { cursorConfigMapName } from '../../../src/gitops/state.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  configMap,
  serviceAccount,
  txnRef,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { configMapYaml, createTestRepo, directory, morePolls, useGitServer, useJanus } from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'git-retention');
const server = useGitServer();
const janus = useJanus(clients);

const PRUNE_ALL = [
  '--retain-last',
  '0',
  '--retain-min-age',
  '1s',
  '--rollback-window',
  '1s',
  '--prune-interval',
  '1s',
];

describe('retention with the Git side', () => {
  it('prunes only recorded outcomes, and a restart without its cursor applies nothing twice', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    const repo = await createTestRepo(server.server);
    const first = await janus.start({ repo: repo.url, namespace: ns.name, args: PRUNE_ALL });
    await repo.push(directory('one', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }));
    await waitForPhase(clients.admin, ns.name, 'one', 'Committed');
    await repo.push(directory('two', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '3' }) } }));
    await waitForPhase(clients.admin, ns.name, 'two', 'Committed');
    await eventually(
      async () => {
        expect(await clients.admin.find(txnRef(ns.name, 'one'))).toBeUndefined();
        expect(await clients.admin.find(txnRef(ns.name, 'two'))).toBeUndefined();
      },
      { timeoutMs: 60_000 },
    );
    const recorded = await repo.subjects();
    expect(recorded).toEqual([
      `${ns.name}/one: Pending (materialized, 1 change)`,
      `${ns.name}/one: Committed (1/1 changes)`,
      `${ns.name}/two: Pending (materialized, 1 change)`,
      `${ns.name}/two: Committed (1/1 changes)`,
    ]);
    // The pruner logs once its deletes have returned: after the test may have seen them gone.
    await eventually(async () =>
      expect((await first.logs()).match(/"msg":"finished Transactions pruned"/g)?.length).toBeGreaterThan(0),
    );
    await first.stop();

    // The cursor is lost: the next run reads the branch from the start.
    await clients.admin.delete({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'janus-system',
      name: cursorConfigMapName({
        repository: repo.url,
        branch: 'main',
        root: 'transactions',
        ...(first.instance && { instance: first.instance }),
      }),
    });
    const second = await janus.start({ repo: repo.url, namespace: ns.name, args: PRUNE_ALL });
    await morePolls(second, 3);
    expect(await clients.admin.find(txnRef(ns.name, 'one'))).toBeUndefined();
    expect(await clients.admin.find(txnRef(ns.name, 'two'))).toBeUndefined();
    expect(await repo.subjects()).toEqual(recorded);
    const app = await clients.admin.get({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'app',
      namespace: ns.name,
    });
    expect(app.data).toEqual({ v: '3' });
  });
});

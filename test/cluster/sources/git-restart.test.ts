/**
 * `janus run` killed (SIGKILL) at the two steps of a source's attempt, then started again after
 * a second commit landed: right after the Source's status names the first commit's Transaction,
 * before it is created; and right after the Transaction is created, before anything else. Either
 * way no commit becomes two Transactions and no two run at once: a first commit whose Transaction
 * was created is waited for, and its outcome recorded with the inventory its render left (read
 * back from the Transaction, the process that created it being gone), before the second commit's
 * is created; one whose Transaction never was is simply not applied, the newest commit is.
 */
import { describe, expect, it } from 'vitest';
import type { Source } from '../../../src/api/v1alpha1/index.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { data, serviceAccount, waitForPhase } from '../../support/cluster/saga.ts';
import { createTestRepo, recordedPhase, useGitServer, useJanus } from '../gitops/harness.ts';
import {
  attempted,
  declaration,
  getSource,
  SOURCE_DEPLOYER,
  sourceFlags,
  sourceTransactions,
  untilSource,
  yamlDocuments,
} from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'src-restart');
const git = useGitServer();
const janus = useJanus(clients);

const configMap = (name: string, mode: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name },
  data: { mode },
});

/** The request after which the first process dies, for each step of the attempt. */
const KILL_POINTS = [
  {
    step: 'the status names the Transaction',
    request: (namespace: string) => `PUT /namespaces/${namespace}/sources/app/status$`,
  },
  {
    step: 'the Transaction is created',
    request: (namespace: string) => `POST /namespaces/${namespace}/transactions$`,
  },
];

describe('janus run killed during a source attempt', () => {
  for (const kill of KILL_POINTS) {
    it(`after ${kill.step}, makes exactly one Transaction of the commit when it starts again`, {
      timeout: 600_000,
    }, async () => {
      await serviceAccount(clients.admin, ns.name, 'deployer', SOURCE_DEPLOYER);
      const repo = await createTestRepo(git.server);
      // A bake window: the first transaction runs a while after the restart.
      const spec = {
        path: 'deploy/app',
        plain: {},
        prune: true,
        health: { targets: 'All', stableFor: '10s' },
      };
      const commit = await repo.push({
        ...declaration('app', ns.name, spec),
        'deploy/app/objects.yaml': yamlDocuments(configMap('one', 'a'), configMap('two', 'b')),
      });
      const first = await janus.start({
        repo: repo.url,
        namespace: ns.name,
        args: sourceFlags(),
        logLevel: 'info',
        env: { JANUS_TEST_EXIT_AFTER_REQUEST: kill.request(ns.name) },
        wait: false,
      });
      expect(await first.exited).toBe('SIGKILL');
      const name = `app-${commit.slice(0, 7)}`;
      const leftBehind = await getSource(clients.admin, ns.name, 'app');
      expect(leftBehind?.status?.lastAttempted).toMatchObject({
        revision: commit,
        transaction: name,
        outcome: 'InProgress',
      });
      const created = (await sourceTransactions(clients.admin, ns.name, 'app')).map((t) => t.metadata.name);
      expect(created).toEqual(kill.step === 'the Transaction is created' ? [name] : []);

      // The branch moves on while janus run is down.
      const next = await repo.push({ 'deploy/app/objects.yaml': yamlDocuments(configMap('one', 'a')) });
      const nextName = `app-${next.slice(0, 7)}`;

      await janus.start({
        repo: repo.url,
        namespace: ns.name,
        args: sourceFlags(),
        logLevel: 'info',
        cacheDir: first.cacheDir,
      });
      const txn = await waitForPhase(clients.admin, ns.name, nextName, 'Committed', 180_000);
      const transactions = await sourceTransactions(clients.admin, ns.name, 'app');
      const names = transactions.map((t) => t.metadata.name);
      if (kill.step === 'the Transaction is created') {
        // The first commit's transaction, found and waited for; the second once it had ended.
        expect(names).toEqual([name, nextName]);
        const firstTxn = transactions[0];
        expect(firstTxn?.status?.phase).toBe('Committed');
        // (creationTimestamp has whole seconds; the first ran a 10 s bake window after the restart)
        const ended = Math.floor(Date.parse(firstTxn?.status?.completedAt ?? '') / 1000) * 1000;
        expect(Date.parse(txn.metadata.creationTimestamp ?? '')).toBeGreaterThanOrEqual(ended);
        await recordedPhase(repo, ns.name, name, 'Committed');
        // The inventory it wrote is its render's: the second prunes what it drops, and only that.
        expect(txn.spec.changes.map((c) => `${c.type} ${c.target.name}`)).toEqual(['Delete two']);
      } else {
        // The first commit's transaction never began: the branch's newest commit is applied instead.
        expect(names).toEqual([nextName]);
        expect(txn.spec.changes.map((c) => `${c.type} ${c.target.name}`)).toEqual(['Apply one']);
        expect(await recordedPhase(repo, ns.name, name, 'Superseded')).toMatchObject({ supersededBy: next });
      }
      const source: Source = await untilSource(clients.admin, ns.name, 'app', attempted(next, 'Committed'));
      expect(source.status?.inventory?.map((e) => e.name)).toEqual(['one']);
      expect(await data(clients.admin, ns.name, 'two')).toBeUndefined();
    });
  }
});

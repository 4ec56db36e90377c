/**
 * Merge-to-apply, end to end: a pull request merged on the watched branch becomes a Transaction,
 * runs as a saga, and its outcome is committed to the results branch; an unmerged branch does
 * nothing; directories apply in commit order; ROLLBACK files roll back.
 */
import { describe, expect, it } from 'vitest';
import {
  ANNOTATION_SOURCE_PATH,
  ANNOTATION_SOURCE_REPOSITORY,
  ANNOTATION_SOURCE_REVISION,
  ANNOTATION_SOURCE_SEQUENCE,
} from '../../../src/api/v1alpha1/index.ts';
import { failAtCommit } from '../../support/cluster/admission.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  configMap,
  data,
  serviceAccount,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { ScratchWorkTree } from '../../support/git/git-server.ts';
import {
  configMapYaml,
  createTestRepo,
  directory,
  morePolls,
  recordedPhase,
  useGitServer,
  useJanus,
} from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'gitops');
const git = useGitServer();
const janus = useJanus(clients);

/** Waits until results/<ns>/<name>.yaml records `phase`. */
const recorded = (repo: Awaited<ReturnType<typeof createTestRepo>>, name: string, phase: string) =>
  recordedPhase(repo, ns.name, name, phase);

describe('janus run', () => {
  it('applies a merged pull request, not an open one, and records the outcome on the results branch', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { version: '1' }));
    const repo = await createTestRepo(git.server);
    const run = await janus.start({ repo: repo.url, namespace: ns.name });

    // A pull request: a branch with the directory, pushed but not merged.
    const user = await ScratchWorkTree.clone(repo.bare);
    await user.checkout('deploy-v2', 'new');
    await user.write(
      directory('deploy-v2', { changes: { '10-app.patch.yaml': configMapYaml('app', { version: '2' }) } }),
    );
    await user.commit('deploy v2');
    await user.push('deploy-v2');
    await morePolls(run, 3);
    expect(
      await clients.admin.find({
        apiVersion: 'tx.janus.io/v1alpha1',
        kind: 'Transaction',
        namespace: ns.name,
        name: 'deploy-v2',
      }),
    ).toBeUndefined();
    expect(await data(clients.admin, ns.name, 'app')).toEqual({ version: '1' });

    // Merged with a merge commit, like the merge button.
    await user.checkout('main');
    const merge = await user.mergeNoFastForward('deploy-v2', 'Merge pull request #1: deploy v2');
    await user.push('main');
    await user.dispose();

    const txn = await waitForPhase(clients.admin, ns.name, 'deploy-v2', 'Committed');
    expect(await data(clients.admin, ns.name, 'app')).toEqual({ version: '2' });
    const annotations = txn.metadata.annotations ?? {};
    expect(annotations[ANNOTATION_SOURCE_REPOSITORY]).toBe(repo.url);
    expect(annotations[ANNOTATION_SOURCE_REVISION]).toBe(`main@sha1:${merge}`);
    expect(annotations[ANNOTATION_SOURCE_PATH]).toBe('transactions/deploy-v2');
    expect(annotations[ANNOTATION_SOURCE_SEQUENCE]).toMatch(/^\d+$/);

    const result = await recorded(repo, 'deploy-v2', 'Committed');
    // The whole record: the Transaction cache holds a finished one compact (one condition, no
    // startedAt), so the reporter reads it in full to write it.
    expect(result).toMatchObject({
      kind: 'TransactionResult',
      transaction: { namespace: ns.name, name: 'deploy-v2' },
      progress: '1/1',
      source: { repository: repo.url, revision: `main@sha1:${merge}`, path: 'transactions/deploy-v2' },
      startedAt: expect.any(String),
      changes: [{ target: `v1 ConfigMap ${ns.name}/app`, type: 'Patch', outcome: 'committed' }],
      conditions: expect.arrayContaining([
        expect.objectContaining({ type: 'Ready', status: 'True' }),
        expect.objectContaining({ type: 'Reconciling', status: 'False' }),
      ]),
      recordedBy: { identity: clients.users.controller },
    });
    expect(await repo.subjects()).toEqual([
      `${ns.name}/deploy-v2: Pending (materialized, 1 change)`,
      `${ns.name}/deploy-v2: Committed (1/1 changes)`,
    ]);
    const log = await repo.log();
    expect(log).toContain(`Janus-Transaction: ${ns.name}/deploy-v2`);
    expect(log).toContain('Janus-Phase: Committed');
    expect(log).toContain(`Janus-Source: ${merge}`);
  });

  it('applies directories added in successive commits in commit order', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'shared', { step: '0' }));
    const repo = await createTestRepo(git.server);
    await janus.start({ repo: repo.url, namespace: ns.name });
    // Three commits touching the same ConfigMap land between two polls, named against their order.
    const user = await ScratchWorkTree.clone(repo.bare);
    for (const [i, name] of ['zz-first', 'mm-second', 'aa-third'].entries()) {
      await user.write(
        directory(name, {
          changes: { '10-shared.patch.yaml': configMapYaml('shared', { step: String(i + 1) }) },
        }),
      );
      await user.commit(`add ${name}`);
    }
    await user.push('main');
    await user.dispose();

    const sequences: number[] = [];
    for (const name of ['zz-first', 'mm-second', 'aa-third']) {
      const txn = await waitForPhase(clients.admin, ns.name, name, 'Committed');
      sequences.push(Number(txn.metadata.annotations?.[ANNOTATION_SOURCE_SEQUENCE]));
    }
    expect(sequences[0]).toBeLessThan(sequences[1] ?? 0);
    expect(sequences[1]).toBeLessThan(sequences[2] ?? 0);
    // The last commit's change is the one that stays.
    expect(await data(clients.admin, ns.name, 'shared')).toEqual({ step: '3' });
  });

  it('rolls back a transaction whose change fails at commit, with the reason on the results branch', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'first', { v: '1' }));
    await clients.admin.create(configMap(ns.name, 'second', { v: '1' }));
    const removePolicy = await failAtCommit(clients.admin, ns.name, 'second');
    try {
      const repo = await createTestRepo(git.server);
      await janus.start({ repo: repo.url, namespace: ns.name });
      await repo.push(
        directory('two-step', {
          changes: {
            '10-first.patch.yaml': configMapYaml('first', { v: '2' }),
            '20-second.patch.yaml': configMapYaml('second', { v: '2' }),
          },
        }),
      );
      const result = await recorded(repo, 'two-step', 'RolledBack');
      expect(await data(clients.admin, ns.name, 'first')).toEqual({ v: '1' });
      const changes = result.changes as Array<{ outcome: string; error?: string }>;
      expect(changes[0]?.outcome).toBe('rolled-back');
      expect(changes[1]?.error).toContain('may not be written');
      expect(String(result.message)).toContain('second');
      const subjects = await repo.subjects();
      expect(subjects).toContain(`${ns.name}/two-step: RollingBack (undoing 1/2 committed changes)`);
      expect(subjects.at(-1)).toBe(`${ns.name}/two-step: RolledBack (1/1 changes rolled back)`);
    } finally {
      await removePolicy();
    }
  });

  it('records Failed when the dry run finds an RBAC gap, with nothing changed', async () => {
    // The ServiceAccount may read ConfigMaps but not patch them.
    await serviceAccount(clients.admin, ns.name, 'deployer', [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] },
    ]);
    await clients.admin.create(configMap(ns.name, 'locked', { v: '1' }));
    const repo = await createTestRepo(git.server);
    await janus.start({ repo: repo.url, namespace: ns.name });
    await repo.push(
      directory('no-rights', { changes: { '10-locked.patch.yaml': configMapYaml('locked', { v: '2' }) } }),
    );
    const result = await recorded(repo, 'no-rights', 'Failed');
    expect(String(result.message)).toMatch(/forbidden/i);
    expect(await data(clients.admin, ns.name, 'locked')).toEqual({ v: '1' });
    expect((await repo.subjects()).at(-1)).toBe(`${ns.name}/no-rights: Failed (0/1 committed)`);
  });

  it('rolls back a committed transaction when a ROLLBACK file is added to its directory', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'flags', { feature: 'off' }));
    const repo = await createTestRepo(git.server);
    await janus.start({ repo: repo.url, namespace: ns.name });
    await repo.push(
      directory('feature-on', {
        changes: { '10-flags.patch.yaml': configMapYaml('flags', { feature: 'on' }) },
      }),
    );
    await recorded(repo, 'feature-on', 'Committed');
    expect(await data(clients.admin, ns.name, 'flags')).toEqual({ feature: 'on' });

    await repo.push(
      { 'transactions/feature-on/ROLLBACK': 'feature X breaks checkout (INC-123)\n' },
      'roll back feature-on',
    );
    await recorded(repo, 'feature-on', 'RolledBack');
    expect(await data(clients.admin, ns.name, 'flags')).toEqual({ feature: 'off' });
    const subjects = await repo.subjects();
    expect(subjects.slice(-2)).toEqual([
      `${ns.name}/feature-on: RollingBack (undoing 1/1 committed changes)`,
      `${ns.name}/feature-on: RolledBack (1/1 changes rolled back)`,
    ]);
  });
});

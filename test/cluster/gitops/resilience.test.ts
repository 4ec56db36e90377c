/**
 * What goes wrong around the Git side, and what must still hold: a competing writer on the
 * results branch, a Git server outage, restarts (clean and SIGKILL), a force-pushed branch.
 * Nothing is lost, nothing is applied twice, the results branch is never force-pushed.
 */
import { describe, expect, it } from 'vitest';
import { ANNOTATION_SOURCE_SEQUENCE } from '../../../src/api/v1alpha1/index.ts';
import { cursorConfigMapName } from '../../../src/gitops/state.ts';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  annotate,
  configMap,
  data,
  getTxn,
  serviceAccount,
  txnRef,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { git, pushCommit, ScratchWorkTree } from '../../support/git/git-server.ts';
import {
  configMapYaml,
  createTestRepo,
  directory,
  morePolls,
  RESULTS,
  type TestRepo,
  useGitServer,
  useJanus,
} from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'resilience');
const server = useGitServer();
const janus = useJanus(clients);

async function recorded(repo: TestRepo, name: string, phase: string): Promise<void> {
  await eventually(
    async () => {
      const result = await repo.result(ns.name, name);
      if (result?.phase !== phase) throw new Error(`${name} is ${String(result?.phase)}, want ${phase}`);
    },
    { timeoutMs: 90_000 },
  );
}

async function setup(): Promise<TestRepo> {
  await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
  await clients.admin.create(configMap(ns.name, 'app', { v: '0' }));
  return createTestRepo(server.server);
}

const patchApp = (name: string, v: string) =>
  directory(name, { changes: { '10-app.patch.yaml': configMapYaml('app', { v }) } });

const sequenceOf = async (name: string) =>
  Number((await getTxn(clients.admin, ns.name, name)).metadata.annotations?.[ANNOTATION_SOURCE_SEQUENCE]);

const gone = async (name: string) => (await clients.admin.find(txnRef(ns.name, name))) === undefined;

describe('the Git side under stress', () => {
  it('replays its results onto a results branch someone else moved, without force and without loss', async () => {
    const repo = await setup();
    const run = await janus.start({ repo: repo.url, namespace: ns.name });
    await repo.push(patchApp('first', '1'));
    await recorded(repo, 'first', 'Committed');

    // Someone else pushes to the results branch between our fetch and our push.
    let theirs: string | undefined;
    server.server.beforeRequest(async (request) => {
      if (request.repo !== repo.name || request.path !== 'git-receive-pack' || request.method !== 'POST')
        return false;
      theirs = await pushCommit(repo.bare, RESULTS, { 'NOTES.md': 'an auditor was here\n' }, 'auditor note');
      return true;
    });
    await repo.push(patchApp('second', '2'));
    await recorded(repo, 'second', 'Committed');

    expect(theirs).toBeDefined();
    await git(repo.bare, 'merge-base', '--is-ancestor', theirs ?? '', RESULTS); // throws if it was overwritten
    expect(await git(repo.bare, 'show', `${RESULTS}:NOTES.md`)).toBe('an auditor was here');
    expect(await repo.count(`${ns.name}/second: Committed (1/1 changes)`)).toBe(1);
    expect(await repo.count(`${ns.name}/second: Pending (materialized, 1 change)`)).toBe(1);
    expect(await repo.count(`${ns.name}/first: Committed (1/1 changes)`)).toBe(1);
    expect(await run.logs()).toContain('results branch moved; replaying onto the new tip');
  });

  it('keeps results while the Git server is down and writes them once it is back', async () => {
    const repo = await setup();
    const run = await janus.start({ repo: repo.url, namespace: ns.name });
    await repo.push(patchApp('steady', '1'));
    await recorded(repo, 'steady', 'Committed');

    server.server.setDown(true, 'reset');
    // A rollback happens in the cluster while no result can be pushed, and a directory lands.
    await annotate(clients.admin, ns.name, 'steady', { 'tx.janus.io/request-rollback': 'outage drill' });
    await waitForPhase(clients.admin, ns.name, 'steady', 'RolledBack');
    await repo.push(patchApp('during', '2'), 'pushed while Janus cannot reach the server');
    const pending = async () =>
      Number(
        /^janus_git_pending_results (\d+)/m.exec(
          await (await fetch(`${await run.opsUrl()}/metrics`)).text(),
        )?.[1],
      );
    await eventually(async () => expect(await pending()).toBeGreaterThanOrEqual(2));
    expect((await repo.subjects()).some((s) => s.includes('RolledBack'))).toBe(false);
    expect(await gone('during')).toBe(true);

    server.server.setDown(false);
    await recorded(repo, 'steady', 'RolledBack');
    await recorded(repo, 'during', 'Committed');
    expect(await data(clients.admin, ns.name, 'app')).toEqual({ v: '2' });
    expect(await repo.count(`${ns.name}/steady: RollingBack (undoing 1/1 committed changes)`)).toBe(1);
    expect(await repo.count(`${ns.name}/steady: RolledBack (1/1 changes rolled back)`)).toBe(1);
    await eventually(async () => expect(await pending()).toBe(0));
  });

  it('never applies a directory twice across restarts, even when its Transaction was deleted', async () => {
    const repo = await setup();
    const first = await janus.start({ repo: repo.url, namespace: ns.name });
    await repo.push(patchApp('one', '1'));
    await recorded(repo, 'one', 'Committed');
    const sequenceOne = await sequenceOf('one');
    await first.kill();
    await clients.admin.delete(txnRef(ns.name, 'one'));
    await eventually(async () => expect(await gone('one')).toBe(true));

    // A new process with an empty cache: the saved cursor and the results branch remember.
    const second = await janus.start({ repo: repo.url, namespace: ns.name });
    await repo.push(patchApp('two', '2'));
    await recorded(repo, 'two', 'Committed');
    // Nothing in the cluster carries sequence "one" any more: the number came from the saved cursor.
    expect(await sequenceOf('two')).toBeGreaterThan(sequenceOne);
    await second.stop();

    // The saved cursor is lost too: every directory at the tip looks new to the next process.
    const cursor = cursorConfigMapName({
      repository: repo.url,
      branch: 'main',
      root: 'transactions',
      ...(second.instance && { instance: second.instance }),
    });
    await clients.admin.delete({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: 'janus-system',
      name: cursor,
    });
    const third = await janus.start({ repo: repo.url, namespace: ns.name });
    await morePolls(third, 2);
    expect(await gone('one')).toBe(true);
    expect(await repo.count(`${ns.name}/one: Pending (materialized, 1 change)`)).toBe(1);
    expect(await repo.count(`${ns.name}/two: Pending (materialized, 1 change)`)).toBe(1);
    expect(await repo.count(`${ns.name}/two: Committed (1/1 changes)`)).toBe(1);

    // Killed right after creating a Transaction: the restarted process adopts it, once.
    await repo.push(patchApp('three', '3'));
    const uid = await eventually(async () => (await getTxn(clients.admin, ns.name, 'three')).metadata.uid);
    await third.kill();
    await janus.start({ repo: repo.url, namespace: ns.name, cacheDir: third.cacheDir });
    await recorded(repo, 'three', 'Committed');
    expect((await getTxn(clients.admin, ns.name, 'three')).metadata.uid).toBe(uid);
    expect(await repo.count(`${ns.name}/three: Committed (1/1 changes)`)).toBe(1);
    expect(await repo.count(`${ns.name}/three: Pending (materialized, 1 change)`)).toBeLessThanOrEqual(1);
    expect(await data(clients.admin, ns.name, 'app')).toEqual({ v: '3' });
  });

  it('does not re-apply anything when the watched branch is force-pushed', async () => {
    const repo = await setup();
    const run = await janus.start({ repo: repo.url, namespace: ns.name });
    const added = await repo.push(patchApp('original', '1'), 'add original');
    await recorded(repo, 'original', 'Committed');
    await clients.admin.delete(txnRef(ns.name, 'original'));
    await eventually(async () => expect(await gone('original')).toBe(true));
    await repo.push({ 'transactions/original': null }, 'remove original');
    await morePolls(run, 2);

    // The branch is reset to the commit that added the directory, plus a new one: to Git the
    // directory is new again. Only the results branch knows it was applied.
    const user = await ScratchWorkTree.clone(repo.bare);
    await user.git('reset', '--quiet', '--hard', added);
    await user.write(patchApp('added-by-rewrite', '2'));
    await user.git('add', '--all');
    await user.git('commit', '--quiet', '--amend', '-m', 'add original and added-by-rewrite (rewritten)');
    await user.push('main', { force: true });
    await user.dispose();

    await recorded(repo, 'added-by-rewrite', 'Committed');
    await morePolls(run, 2);
    expect(await gone('original')).toBe(true);
    expect(await repo.count(`${ns.name}/original: Pending (materialized, 1 change)`)).toBe(1);
    expect(await data(clients.admin, ns.name, 'app')).toEqual({ v: '2' });
    expect(await run.logs()).toContain('"history":"rewritten"');
  });
});

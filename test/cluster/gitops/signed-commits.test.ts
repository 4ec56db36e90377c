/**
 * --verify-signatures end to end: commits signed by the real `git commit -S` with SSH keys made
 * by the real ssh-keygen, pushed to the real Git server; only directories whose every commit is
 * signed by an allowed signer are applied, the rest are Rejected naming the commit.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  configMap,
  data,
  serviceAccount,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { ScratchWorkTree } from '../../support/git/git-server.ts';
import { makeKey, signerLine, signingConfig, type TestKey } from '../../support/git/ssh-signing.ts';
import {
  configMapYaml,
  createTestRepo,
  directory,
  morePolls,
  type TestRepo,
  useGitServer,
  useJanus,
} from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'signed');
const git = useGitServer();
const janus = useJanus(clients);

const alice = makeKey('ed25519', 'alice');
const mallory = makeKey('ed25519', 'mallory');

interface RecordedError {
  file: string;
  code: string;
  message: string;
}

/** Commits `files` in `tree`, signed by `key` (unsigned without one); returns the sha. */
async function commit(
  tree: ScratchWorkTree,
  files: Record<string, string | null>,
  key: TestKey | undefined,
  message: string,
) {
  await tree.write(files);
  await tree.git('add', '--all');
  const sign = key ? signingConfig(key) : ['-c', 'commit.gpgsign=false'];
  await tree.git(...sign, 'commit', '--quiet', '-m', message);
  return tree.git('rev-parse', 'HEAD');
}

const allowedFile = join(alice.path, '..', 'allowed_signers');

async function startJanus(repo: TestRepo, args: string[] = []) {
  await writeFile(allowedFile, `${signerLine('alice@example.com', alice, 'namespaces="git"')}\n`);
  return janus.start({
    repo: repo.url,
    namespace: ns.name,
    args: [
      '--allowed-namespaces',
      ns.name,
      '--verify-signatures',
      '--allowed-signers-file',
      allowedFile,
      ...args,
    ],
  });
}

async function rejection(repo: TestRepo, name: string): Promise<RecordedError[]> {
  return eventually(async () => {
    const result = await repo.result(ns.name, name);
    if (result?.phase !== 'Rejected') throw new Error(`${name}: ${String(result?.phase)}`);
    return result.errors as RecordedError[];
  });
}

describe('signed commits', () => {
  it('applies the directory signed by an allowed signer, rejects the unsigned and the wrongly signed', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    for (const name of ['a', 'b', 'c']) await clients.admin.create(configMap(ns.name, name, { v: '1' }));
    const repo = await createTestRepo(git.server);
    const process = await startJanus(repo);

    const tree = await ScratchWorkTree.clone(repo.bare);
    const patch = (target: string) => ({ '10-cm.patch.yaml': configMapYaml(target, { v: '2' }) });
    const unsigned = await commit(
      tree,
      directory('unsigned', { changes: patch('a') }),
      undefined,
      'unsigned',
    );
    const wrong = await commit(
      tree,
      directory('wrong-key', { changes: patch('b') }),
      mallory,
      'signed by mallory',
    );
    await commit(tree, directory('signed', { changes: patch('c') }), alice, 'signed by alice');
    await tree.push('main');

    await waitForPhase(clients.admin, ns.name, 'signed', 'Committed');
    expect(await data(clients.admin, ns.name, 'c')).toEqual({ v: '2' });
    expect(await rejection(repo, 'unsigned')).toEqual([
      expect.objectContaining({
        file: 'transactions/unsigned',
        code: 'commit-signature',
        message: `commit ${unsigned}: the commit is not signed`,
      }),
    ]);
    expect(await rejection(repo, 'wrong-key')).toEqual([
      expect.objectContaining({
        code: 'commit-signature',
        message: expect.stringMatching(
          new RegExp(`^commit ${wrong}: signed by a key not in the allowed signers`),
        ),
      }),
    ]);
    expect((await repo.result(ns.name, 'unsigned'))?.message).toBe(
      'a commit that made the directory is not signed by an allowed signer; nothing was applied',
    );
    expect(await data(clients.admin, ns.name, 'a')).toEqual({ v: '1' });
    expect(await data(clients.admin, ns.name, 'b')).toEqual({ v: '1' });

    // An unsigned ROLLBACK file does not roll the signed transaction back.
    const rollback = await commit(tree, { 'transactions/signed/ROLLBACK': 'undo\n' }, undefined, 'rollback');
    await tree.push('main');
    await eventually(async () => {
      const log = await repo.log();
      if (!log.includes('rollback refused (commit signature)')) throw new Error('no notice yet');
      expect(log).toContain(`commit ${rollback}: the commit is not signed`);
    });
    await morePolls(process);
    await waitForPhase(clients.admin, ns.name, 'signed', 'Committed');
    expect(await data(clients.admin, ns.name, 'c')).toEqual({ v: '2' });
    await tree.dispose();
  });

  it('blocks a directory whose middle commit in a pushed range is unsigned, though the tip is signed', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    for (const name of ['x', 'y']) await clients.admin.create(configMap(ns.name, name, { v: '1' }));
    const repo = await createTestRepo(git.server);
    await startJanus(repo);

    const tree = await ScratchWorkTree.clone(repo.bare);
    await commit(
      tree,
      directory('first', { changes: { '10-x.patch.yaml': configMapYaml('x', { v: '2' }) } }),
      alice,
      'alice',
    );
    const middle = await commit(
      tree,
      directory('laundered', { changes: { '10-y.patch.yaml': configMapYaml('y', { v: 'evil' }) } }),
      undefined,
      'pushed with a stolen token',
    );
    const tip = await commit(
      tree,
      { 'transactions/laundered/10-y.patch.yaml': configMapYaml('y', { v: 'reviewed' }) },
      alice,
      'alice signs on top',
    );
    await tree.push('main');

    await waitForPhase(clients.admin, ns.name, 'first', 'Committed');
    await eventually(async () => {
      // Rejected at the unsigned commit, and again at the signed tip: both name the unsigned one.
      const log = await repo.log();
      if (!log.includes(`Janus-Source: ${tip}`)) throw new Error('the tip is not recorded yet');
    });
    expect(await rejection(repo, 'laundered')).toEqual([
      expect.objectContaining({ message: `commit ${middle}: the commit is not signed` }),
    ]);
    expect(await data(clients.admin, ns.name, 'y')).toEqual({ v: '1' });
    await tree.dispose();
  });

  it('re-reads the allowed signers when the file changes, and keeps a signer to its namespaces', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    for (const name of ['m', 'n']) await clients.admin.create(configMap(ns.name, name, { v: '1' }));
    const repo = await createTestRepo(git.server);
    await startJanus(repo, ['--signer-namespaces', 'mallory@example.com=elsewhere']);
    const tree = await ScratchWorkTree.clone(repo.bare);

    // Mallory is not an allowed signer yet.
    const early = await commit(
      tree,
      directory('before', { changes: { '10-m.patch.yaml': configMapYaml('m', { v: '2' }) } }),
      mallory,
      'm',
    );
    await tree.push('main');
    expect((await rejection(repo, 'before'))[0]?.message).toMatch(
      new RegExp(`^commit ${early}: signed by a key not in the allowed signers`),
    );

    // Added to the file (as the kubelet updates a mounted ConfigMap): read at the next poll, no restart.
    await writeFile(
      allowedFile,
      `${signerLine('alice@example.com', alice)}\n${signerLine('mallory@example.com', mallory)}\n`,
    );
    const later = await commit(
      tree,
      directory('after', { changes: { '10-n.patch.yaml': configMapYaml('n', { v: '2' }) } }),
      mallory,
      'n',
    );
    await tree.push('main');
    // Known now, but --signer-namespaces gives mallory only the namespace "elsewhere".
    expect(await rejection(repo, 'after')).toEqual([
      expect.objectContaining({
        message: `commit ${later}: signer mallory@example.com may not sign for namespace ${ns.name}`,
      }),
    ]);
    expect(await data(clients.admin, ns.name, 'n')).toEqual({ v: '1' });
    await tree.dispose();
  });
});

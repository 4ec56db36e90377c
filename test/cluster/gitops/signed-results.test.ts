/**
 * Signed results end to end: janus run with --results-signing-key-file (a key made by the real
 * ssh-keygen) writes results that the real `git verify-commit` accepts, every commit of the
 * branch; `janus history --verify` marks them verified, and marks what someone else pushed to the
 * branch (unsigned, or signed with another key) as not. A result queued before a crash is signed
 * with the key in force when it is pushed after the restart, and signed again when replayed onto
 * a tip someone else moved.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  annotate,
  configMap,
  data,
  serviceAccount,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { git, pushCommit, ScratchWorkTree } from '../../support/git/git-server.ts';
import { makeKey, signerLine, signingConfig, type TestKey } from '../../support/git/ssh-signing.ts';
import { janus as cli } from '../../support/processes/cli.ts';
import {
  configMapYaml,
  createTestRepo,
  directory,
  RESULTS,
  type TestRepo,
  useGitServer,
  useJanus,
} from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'signed-results');
const server = useGitServer();
const janus = useJanus(clients);

const janusKey = makeKey('ed25519', 'janus-results');
const mallory = makeKey('ed25519', 'mallory');

/** A record that looks like Janus's, committed on the results branch by someone else. */
async function foreignRecord(tree: ScratchWorkTree, name: string, key: TestKey | undefined): Promise<string> {
  await tree.write({ [`results/${ns.name}/${name}.yaml`]: 'phase: Committed\n' });
  await tree.git('add', '--all');
  const message = `${ns.name}/${name}: Committed\n\nJanus-Transaction: ${ns.name}/${name}\nJanus-Phase: Committed\n`;
  const sign = key ? signingConfig(key) : ['-c', 'commit.gpgsign=false'];
  await tree.git(...sign, 'commit', '--quiet', '-m', message);
  return tree.git('rev-parse', 'HEAD');
}

/** `janus history --verify` of the repository's results branch, as an auditor runs it. */
async function verifiedHistory(repo: TestRepo, allowed: string, ...extra: string[]) {
  const cacheDir = await mkdtemp(join(tmpdir(), 'janus-h-'));
  return cli([
    'history',
    '--repo',
    repo.url,
    '--cache-dir',
    cacheDir,
    '--verify',
    '--allowed-signers-file',
    allowed,
    ...extra,
  ]);
}

async function recorded(repo: TestRepo, name: string, phase: string): Promise<void> {
  await eventually(
    async () => {
      const result = await repo.result(ns.name, name);
      if (result?.phase !== phase) throw new Error(`${name}: ${String(result?.phase)}, waiting for ${phase}`);
    },
    { timeoutMs: 90_000 },
  );
}

describe('signed results', () => {
  it('every results commit verifies with git verify-commit; janus history --verify tells them from foreign ones', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'web', { v: '1' }));
    const repo = await createTestRepo(server.server);
    const process = await janus.start({
      repo: repo.url,
      namespace: ns.name,
      args: ['--allowed-namespaces', ns.name, '--results-signing-key-file', janusKey.path],
    });
    await repo.push(
      directory('deploy', { changes: { '10-web.patch.yaml': configMapYaml('web', { v: '2' }) } }),
    );
    await eventually(
      async () => {
        const result = await repo.result(ns.name, 'deploy');
        if (result?.phase !== 'Committed') throw new Error(`deploy: ${String(result?.phase)}`);
      },
      { timeoutMs: 90_000 },
    );
    expect(await data(clients.admin, ns.name, 'web')).toEqual({ v: '2' });
    await process.stop(); // nothing else writes the branch while the foreign records are pushed
    // The log names the public key, for the operator to compare with the published line.
    const logs = await process.logs();
    expect(logs).toContain('results commits are signed with this key');
    expect(logs).toContain(janusKey.publicKey.split(' ').slice(0, 2).join(' '));

    const dir = await mkdtemp(join(tmpdir(), 'janus-auditor-'));
    const allowed = join(dir, 'allowed_signers');
    await writeFile(allowed, `${signerLine('janus@example.com', janusKey, 'namespaces="git"')}\n`);
    const commits = (await git(repo.bare, 'rev-list', RESULTS)).trim().split('\n');
    expect(commits.length).toBeGreaterThanOrEqual(2); // Pending, Committed
    for (const commit of commits) {
      const { stderr } = await promisify(execFile)(
        'git',
        ['-c', `gpg.ssh.allowedSignersFile=${allowed}`, 'verify-commit', commit],
        { cwd: repo.bare },
      );
      expect(stderr).toContain('Good "git" signature for janus@example.com with ED25519 key');
    }

    const tree = await ScratchWorkTree.clone(repo.bare);
    await tree.checkout(RESULTS);
    const unsigned = await foreignRecord(tree, 'forged-unsigned', undefined);
    const wrongKey = await foreignRecord(tree, 'forged-signed', mallory);
    await tree.push(RESULTS);

    const history = await verifiedHistory(repo, allowed, '-o', 'json');
    expect(history.code, history.stderr).toBe(3);
    const entries = JSON.parse(history.stdout).entries as {
      transaction: string;
      phase: string;
      record: string;
      signature: { status: string; detail: string };
    }[];
    const marks = entries.map((e) => [e.transaction, e.phase, e.signature.status]);
    expect(marks).toEqual([
      [`${ns.name}/deploy`, 'Pending', 'verified'],
      [`${ns.name}/deploy`, 'Committed', 'verified'],
      [`${ns.name}/forged-unsigned`, 'Committed', 'unsigned'],
      [`${ns.name}/forged-signed`, 'Committed', 'unknown key'],
    ]);
    expect(entries[2]?.record).toBe(unsigned);
    expect(entries[3]?.record).toBe(wrongKey);
    expect(entries[0]?.signature.detail).toBe('janus@example.com');

    // The table, as an auditor reads it: a SIGNATURE column, and why each record is not verified.
    const table = await cli(['history', '--verify', '--allowed-signers-file', allowed], { cwd: tree.dir });
    expect(table.code).toBe(3);
    expect(table.stderr).toMatch(/SIGNATURE\n/);
    expect(table.stderr).toContain(
      `${wrongKey.slice(0, 12)} unknown key: signed by a key not in the allowed signers`,
    );
  });

  it("janus history --verify finds a pusher's commit without trailers under Janus's next signed record", async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'site', { v: '1' }));
    const repo = await createTestRepo(server.server);
    await janus.start({
      repo: repo.url,
      namespace: ns.name,
      args: ['--allowed-namespaces', ns.name, '--results-signing-key-file', janusKey.path],
    });
    await repo.push(
      directory('site-v2', { changes: { '10-site.patch.yaml': configMapYaml('site', { v: '2' }) } }),
    );
    await recorded(repo, 'site-v2', 'Committed');
    // A results-branch pusher rewrites the outcome in a commit that is no record: no trailers.
    const planted = await pushCommit(
      repo.bare,
      RESULTS,
      { [`results/${ns.name}/site-v2.yaml`]: 'phase: RolledBack\nmessage: nothing to see\n' },
      'tidy up',
    );
    // Janus's next records, signed, are made on top of it and carry its file.
    await repo.push(
      directory('site-v3', { changes: { '10-site.patch.yaml': configMapYaml('site', { v: '3' }) } }),
    );
    await recorded(repo, 'site-v3', 'Committed');
    await git(repo.bare, 'merge-base', '--is-ancestor', planted, RESULTS);

    const allowed = join(await mkdtemp(join(tmpdir(), 'janus-auditor-')), 'allowed_signers');
    await writeFile(allowed, `${signerLine('janus@example.com', janusKey, 'namespaces="git"')}\n`);
    const audit = await verifiedHistory(repo, allowed);
    // Every record shown verifies; the branch does not.
    expect(audit.stderr).not.toMatch(/ (unsigned|unknown key|bad signature)\n/);
    expect(audit.code, audit.stderr).toBe(3);
    expect(audit.stderr).toMatch(
      new RegExp(`Branch: \\d+ commits checked, 1 not verified; the first, from the tip: ${planted}\n`),
    );
    expect(audit.stderr).toContain(`  ${planted} unsigned: `);

    // From the planted commit on, the branch is Janus's: --verify-after it passes.
    const after = await verifiedHistory(repo, allowed, '--verify-after', planted.slice(0, 12), '-o', 'json');
    expect(after.code, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout).audit).toMatchObject({ unverifiedCount: 0, unverified: [] });
  });

  it('signs a result queued before a crash with the key in force at the push after it, and again when replayed', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    const repo = await createTestRepo(server.server);
    const old = makeKey('ed25519', 'old');
    const rotated = makeKey('ed25519', 'rotated');
    const keyFile = join(await mkdtemp(join(tmpdir(), 'janus-secret-')), 'ssh-privatekey');
    await copyFile(old.path, keyFile);
    const args = ['--allowed-namespaces', ns.name, '--results-signing-key-file', keyFile];
    const first = await janus.start({ repo: repo.url, namespace: ns.name, args });
    await repo.push(
      directory('steady', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }),
    );
    await recorded(repo, 'steady', 'Committed');

    // Outage: the rollback's results wait in the spool; then the process dies with them there.
    server.server.setDown(true, 'reset');
    await annotate(clients.admin, ns.name, 'steady', { 'tx.janus.io/request-rollback': 'drill' });
    await waitForPhase(clients.admin, ns.name, 'steady', 'RolledBack');
    const pending = async () =>
      Number(
        /^janus_git_pending_results (\d+)/m.exec(
          await (await fetch(`${await first.opsUrl()}/metrics`)).text(),
        )?.[1],
      );
    await eventually(async () => expect(await pending()).toBeGreaterThanOrEqual(1));
    await first.kill();

    // The Secret is rotated (the kubelet swaps the file), and someone moves the branch between our
    // fetch and our first push after the restart: the push is rejected and replayed.
    await copyFile(rotated.path, `${keyFile}.new`);
    await rename(`${keyFile}.new`, keyFile);
    let moved = false;
    server.server.beforeRequest(async (request) => {
      if (
        moved ||
        request.repo !== repo.name ||
        request.path !== 'git-receive-pack' ||
        request.method !== 'POST'
      )
        return false;
      moved = true;
      await pushCommit(repo.bare, RESULTS, { 'NOTES.md': 'an auditor was here\n' }, 'auditor note');
      return true;
    });
    server.server.setDown(false);
    const second = await janus.start({ repo: repo.url, namespace: ns.name, args, cacheDir: first.cacheDir });
    await recorded(repo, 'steady', 'RolledBack');
    expect(await second.logs()).toContain('results branch moved; replaying onto the new tip');

    const allowed = join(await mkdtemp(join(tmpdir(), 'janus-auditor-')), 'allowed_signers');
    await writeFile(allowed, `${signerLine('old@janus', old)}\n${signerLine('rotated@janus', rotated)}\n`);
    const log = await git(
      repo.bare,
      '-c',
      `gpg.ssh.allowedSignersFile=${allowed}`,
      'log',
      '--reverse',
      '--format=%G? %GS | %s',
      RESULTS,
    );
    expect(log.trim().split('\n')).toEqual([
      `G old@janus | ${ns.name}/steady: Pending (materialized, 1 change)`,
      `G old@janus | ${ns.name}/steady: Committed (1/1 changes)`,
      'N  | auditor note',
      // A long subject is cut short (the namespace is long): the phase is what matters here.
      expect.stringMatching(new RegExp(`^G rotated@janus \\| ${ns.name}/steady: RollingBack \\(`)),
      `G rotated@janus | ${ns.name}/steady: RolledBack (1/1 changes rolled back)`,
    ]);
  });

  it('refuses to start with a key under a passphrase, saying so', async () => {
    const repo = await createTestRepo(server.server);
    const locked = makeKey('ed25519', 'locked');
    await promisify(execFile)('ssh-keygen', ['-q', '-p', '-N', 'secret', '-f', locked.path]);
    const run = await janus.start({
      repo: repo.url,
      namespace: ns.name,
      args: ['--allowed-namespaces', ns.name, '--results-signing-key-file', locked.path],
      wait: false,
    });
    expect(await run.exited).not.toBe(0);
    expect(await run.logs()).toContain(
      `the results signing key ${locked.path}: the key is encrypted with a passphrase (aes256-ctr); Janus needs it unencrypted`,
    );
    expect(await repo.subjects()).toEqual([]);
  });
});

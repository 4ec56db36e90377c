/**
 * Issue 21, finding 6: a Git pusher cannot exhaust the poller's memory with trees and commits
 * instead of blobs. Each hostile push is a few MiB on the wire (a tree of a million entries is
 * 36 MiB inflated, 2.5 MiB packed) and `janus run` runs with a 128 MiB heap: before the bounds,
 * parsing such a tree on every poll crashed it (JavaScript heap out of memory), restart after
 * restart. Now each is refused from the object's Git header, before anything is parsed: a
 * directory is Rejected on the results branch with the reason; what cannot be pinned on one
 * directory fails the poll naming the repository, the commit and the limit, and the poller stays
 * at that commit (skipping it would lose the legitimate directories it carries).
 */
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
import { hugeTree, pushCrafted, pushSharedFile } from '../../support/git/hostile-git.ts';
import {
  configMapYaml,
  createTestRepo,
  directory,
  morePolls,
  successfulPolls,
  useGitServer,
  useJanus,
} from '../gitops/harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'git-input');
const git = useGitServer();
const janus = useJanus(clients);

const MiB = 1024 * 1024;
/** The heap `janus run` gets here: a quarter of the shipped Deployment's 512 MiB memory limit. */
const SMALL_HEAP = { NODE_OPTIONS: '--max-old-space-size=128' };
const MILLION = 1_000_000;

interface LogLine {
  msg?: string;
  err?: { message?: string };
  result?: { stoppedAt?: string };
}

async function logLines(logs: Promise<string>, msg: string): Promise<LogLine[]> {
  return (await logs)
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine)
    .filter((line) => line.msg === msg);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const rejected = (
  repo: { result(ns: string, name: string): Promise<Record<string, unknown> | undefined> },
  name: string,
) =>
  eventually(async () => {
    const result = await repo.result(ns.name, name);
    if (result?.phase !== 'Rejected') throw new Error(`${name}: ${String(result?.phase)}`);
    return result.errors;
  });

describe('trees, commits and polls a pusher controls are bounded', () => {
  it('rejects a directory of a million entries from its tree header, and applies the rest', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    const repo = await createTestRepo(git.server);
    const run = await janus.start({ repo: repo.url, namespace: ns.name, env: SMALL_HEAP });
    await pushCrafted(repo.url, {
      files: directory('good', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }),
      trees: { 'transactions/million': (cwd) => hugeTree(cwd, MILLION) },
      message: 'a good directory, and one of a million files',
    });

    await waitForPhase(clients.admin, ns.name, 'good', 'Committed');
    expect(await data(clients.admin, ns.name, 'app')).toEqual({ v: '2' });
    expect(await rejected(repo, 'million')).toEqual([
      expect.objectContaining({
        file: 'transactions/million',
        code: 'too-many-files',
        message: `the directory's Git tree is 36000000 bytes, more than 272 entries can take (76976 bytes); at most 272 entries are allowed`,
      }),
    ]);
    await morePolls(run, 2);
    expect(await logLines(run.logs(), 'poll failed; retrying with backoff')).toEqual([]);
    expect(run.child.exitCode).toBeNull();
  });

  it('fails the poll on a transactions folder of a million entries, naming repository, commit and limit; a rewrite recovers', async () => {
    const repo = await createTestRepo(git.server);
    const run = await janus.start({ repo: repo.url, namespace: ns.name, env: SMALL_HEAP });
    // A clone from before the hostile push, to rewrite the branch later (checking out a million
    // files would take minutes).
    const work = await ScratchWorkTree.clone(repo.url);
    const hostile = await pushCrafted(repo.url, {
      trees: { transactions: (cwd) => hugeTree(cwd, MILLION) },
    });
    const limit = `read ${repo.url} (main) at commit ${hostile}: tree`;
    const message = new RegExp(
      `^${escapeRegExp(limit)} [0-9a-f]{40} is 36000000 bytes, more than the 4194304 bytes a tree may take; it was not read, and the poll stays at this commit$`,
    );
    const failed = await eventually(async () => {
      const lines = await logLines(run.logs(), 'poll failed; retrying with backoff');
      if (lines.length < 2) throw new Error(`${lines.length} failed polls so far`);
      return lines;
    });
    for (const line of failed) {
      expect(line.err?.message).toMatch(message);
    }
    // Counted as failed polls (readiness fails once they have failed for a minute).
    const metrics = await (await fetch(`${await run.opsUrl()}/metrics`)).text();
    expect(
      Number(/^janus_git_polls_total\{result="error"\} (\d+)/m.exec(metrics)?.[1]),
    ).toBeGreaterThanOrEqual(2);
    expect(run.child.exitCode).toBeNull();

    // The branch rewritten without it (a force-push of a good commit): the poll goes on.
    const before = await successfulPolls(run);
    try {
      await work.write({ 'README.md': 'rewritten\n' });
      await work.commit('without the huge folder');
      await work.push('main', { force: true });
    } finally {
      await work.dispose();
    }
    await eventually(async () => expect(await successfulPolls(run)).toBeGreaterThan(before), {
      timeoutMs: 60_000,
    });
  });

  // 200 MiB: past the poller's 128 MiB heap here, and past what a whole read could hold, while a
  // loaded machine still packs, serves and fetches it within the wait (600 MiB missed 90 s at load 10).
  it('reads the first 64 KiB of a commit whose message is 200 MiB, and applies its directory', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'msg', { v: '1' }));
    const repo = await createTestRepo(git.server);
    const run = await janus.start({ repo: repo.url, namespace: ns.name, env: SMALL_HEAP });
    await pushCrafted(repo.url, {
      files: directory('long-message', {
        changes: { '10-msg.patch.yaml': configMapYaml('msg', { v: '2' }) },
      }),
      message: Buffer.concat([Buffer.from('subject\n\n'), Buffer.alloc(200 * MiB, 'a')]),
    });
    await waitForPhase(clients.admin, ns.name, 'long-message', 'Committed', 240_000);
    expect(await data(clients.admin, ns.name, 'msg')).toEqual({ v: '2' });
    expect(await logLines(run.logs(), 'poll failed; retrying with backoff')).toEqual([]);
  }, 300_000);

  it('fails the poll on one commit of a thousand directories sharing a 1 MiB file, and stays alive', async () => {
    const repo = await createTestRepo(git.server);
    const run = await janus.start({ repo: repo.url, namespace: ns.name, env: SMALL_HEAP });
    const transactionYaml = (name: string) =>
      directory(name, { changes: {} })[`transactions/${name}/transaction.yaml`] ?? '';
    const shared = {
      name: '10-big.create.yaml',
      content: configMapYaml('big', { blob: 'x'.repeat(MiB - 200) }),
    };
    const commit = await pushSharedFile(repo.url, 1000, transactionYaml, shared);
    const failed = await eventually(async () => {
      const lines = await logLines(run.logs(), 'poll failed; retrying with backoff');
      if (lines.length < 2) throw new Error(`${lines.length} failed polls so far`);
      return lines;
    });
    for (const line of failed) {
      expect(line.err?.message).toBe(
        `read ${repo.url} (main): commit ${commit} changes directories holding more than the 16777216 bytes of files one poll reads; it was not read, and the poll stays at it`,
      );
    }
    expect(run.child.exitCode).toBeNull();
  });

  it('splits a long push across polls by its budget, and loses no directory', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    const repo = await createTestRepo(git.server);
    const run = await janus.start({
      repo: repo.url,
      namespace: ns.name,
      args: ['--max-poll-directories', '2'],
    });
    const names = ['split-1', 'split-2', 'split-3', 'split-4', 'split-5'];
    const work = await ScratchWorkTree.clone(repo.url);
    try {
      await work.checkout('main');
      for (const name of names) {
        await work.write(
          directory(name, { changes: { '10-cm.create.yaml': configMapYaml(name, { v: '1' }) } }),
        );
        await work.commit(`add ${name}`);
      }
      await work.push('main');
    } finally {
      await work.dispose();
    }
    // One push of five commits: read two, two, then one, in three polls one after the other.
    for (const name of names) await waitForPhase(clients.admin, ns.name, name, 'Committed');
    const stopped = (await logLines(run.logs(), 'poll done')).filter((l) => l.result?.stoppedAt);
    expect(stopped.length).toBe(2);
  });
});

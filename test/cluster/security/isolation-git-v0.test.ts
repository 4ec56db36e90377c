/**
 * Issue 34, item 1: a pusher to the watched repository, on a server that speaks only protocol
 * version 0 (git http-backend without GIT_PROTOCOL, as several hosted and self-hosted servers),
 * cannot take the poller past the Deployment's memory. A commit holding a 1 GiB file of zeros is
 * a ~1 MB pack; fetched through isomorphic-git (as such servers were, before), every object was
 * inflated whole and `janus run` peaked at over 4 GiB resident on every poll. Now every protocol
 * goes through Janus's own client and pack indexer: the file is hashed as it inflates, its
 * directory is Rejected from the file's Git header (`file-too-large`), and the neighbour's
 * directory of the same push commits.
 */
import { readFile } from 'node:fs/promises';
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
import { git as nativeGit } from '../../support/git/git-server.ts';
import { pushZeros } from '../../support/git/hostile-git.ts';
import { configMapYaml, createTestRepo, directory, useGitServer, useJanus } from '../gitops/harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'git-v0');
const git = useGitServer({ protocolV0Only: true });
const janus = useJanus(clients);

const GiB = 1024 * 1024 * 1024;
/**
 * The most `janus run` may have been resident (MiB): ~150 MiB is its usual peak (the same
 * commit from a protocol version 2 server: 149 MiB), the Deployment allows 512; before, 4,203.
 */
const PEAK_MIB = 400;

/** The most the process has been resident, in MiB (VmHWM). */
async function peakResidentMiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? Number.NaN) / 1024;
}

describe('a pusher on a server that speaks only protocol version 0', () => {
  it("commits a 1 GiB file of zeros: the poll stays bounded, the directory is rejected, the neighbour's commits", async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'neighbour', { v: '1' }));
    const repo = await createTestRepo(git.server);
    // The pushed pack kept as it came, as forges keep it: serving it deflates nothing again.
    await nativeGit(repo.bare, 'config', 'receive.unpackLimit', '1');
    const run = await janus.start({ repo: repo.url, namespace: ns.name });
    await pushZeros(
      repo.url,
      {
        ...directory('neighbour', {
          changes: { '10-neighbour.patch.yaml': configMapYaml('neighbour', { v: '2' }) },
        }),
        ...directory('zeros', { changes: {} }),
      },
      'transactions/zeros/10-zeros.create.yaml',
      GiB,
    );

    await waitForPhase(clients.admin, ns.name, 'neighbour', 'Committed', 240_000);
    expect(await data(clients.admin, ns.name, 'neighbour')).toEqual({ v: '2' });
    const result = await eventually(async () => {
      const recorded = await repo.result(ns.name, 'zeros');
      if (recorded?.phase !== 'Rejected') throw new Error(`zeros: ${String(recorded?.phase)}`);
      return recorded;
    });
    expect(result.errors).toEqual([
      expect.objectContaining({ file: 'transactions/zeros/10-zeros.create.yaml', code: 'file-too-large' }),
    ]);
    expect(await peakResidentMiB(run.child.pid ?? 0)).toBeLessThan(PEAK_MIB);
    expect(run.child.exitCode).toBeNull();
  }, 420_000);
});

/**
 * A leader whose Git side cannot start does not keep the Lease: the process ends, non-zero, saying
 * why, and releases the Lease, so a healthy replica (or the restarted pod) takes over. Before, the
 * elector logged "onStartedLeading failed", kept renewing, ran the controller without a Git side
 * and answered /readyz as a standby: ready, and doing nothing.
 */
import { randomBytes } from 'node:crypto';
import { readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { eventually } from '../../support/eventually.ts';
import { createTestRepo, useGitServer, useJanus } from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'term-start');
const git = useGitServer();
const janus = useJanus(clients);

/** The folder of the repository's local state under a cache dir (one repository per cache here). */
async function stateDir(cacheDir: string): Promise<string> {
  const [only, ...more] = (await readdir(cacheDir, { withFileTypes: true })).filter((e) => e.isDirectory());
  if (!only || more.length > 0) throw new Error(`expected one repository state folder in ${cacheDir}`);
  return join(cacheDir, only.name);
}

describe('a term that cannot start', () => {
  it('ends the process with the reason and releases the Lease', async () => {
    const repo = await createTestRepo(git.server);
    const leaseName = `janus-test-${randomBytes(4).toString('hex')}`;
    const election = ['--leader-elect', '--leader-election-id', leaseName, '--leader-retry-period', '500ms'];
    const first = await janus.start({ repo: repo.url, namespace: ns.name, args: election });
    expect(await first.stop()).toBe(0);

    // The results spool's folder is a file now: the Git side's start fails on it.
    const spool = join(await stateDir(first.cacheDir), 'pending-results');
    await rm(spool, { recursive: true, force: true });
    await writeFile(spool, 'not a folder\n');

    const second = await janus.start({
      repo: repo.url,
      namespace: ns.name,
      cacheDir: first.cacheDir,
      args: election,
      wait: false,
    });
    expect(await second.exited).toBe(1);
    const log = await second.logs();
    expect(log).toContain('became leader');
    expect(log).toContain('pending-results');
    const lease = await eventually(async () => {
      const found = await clients.admin.get({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        namespace: 'janus-system',
        name: leaseName,
      });
      const holder = (found as { spec?: { holderIdentity?: string } }).spec?.holderIdentity;
      if (holder) throw new Error(`the Lease is still held by ${holder}`);
      return found;
    });
    expect(lease).toBeDefined();
  });
});

/**
 * Two replicas of `janus run` under one leader election: only the leader polls and writes
 * results; when it dies, the standby takes over and carries on from where it stopped.
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
import {
  configMapYaml,
  createTestRepo,
  directory,
  fastLeaderElection,
  successfulPolls,
  useGitServer,
  useJanus,
} from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'leader');
const server = useGitServer();
const janus = useJanus(clients);

describe('leader election', () => {
  it('lets only the leader poll, and hands over to the standby when the leader dies', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '0' }));
    const repo = await createTestRepo(server.server);
    const election = fastLeaderElection('janus-test');
    const a = await janus.start({ repo: repo.url, namespace: ns.name, args: election, wait: false });
    const b = await janus.start({ repo: repo.url, namespace: ns.name, args: election, wait: false });
    const polls = async () => [await successfulPolls(a), await successfulPolls(b)];
    await eventually(async () => expect((await polls()).some((n) => n > 0)).toBe(true), {
      timeoutMs: 90_000,
    });
    const [leader, standby] = (await successfulPolls(a)) > 0 ? [a, b] : [b, a];
    expect(await successfulPolls(standby)).toBe(0);

    await repo.push(
      directory('by-leader', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '1' }) } }),
    );
    await waitForPhase(clients.admin, ns.name, 'by-leader', 'Committed');
    await eventually(async () => expect((await repo.result(ns.name, 'by-leader'))?.phase).toBe('Committed'));
    expect(await successfulPolls(standby)).toBe(0);

    await leader.kill();
    await eventually(async () => expect(await successfulPolls(standby)).toBeGreaterThan(0), {
      timeoutMs: 90_000,
    });
    await repo.push(
      directory('by-standby', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }),
    );
    await waitForPhase(clients.admin, ns.name, 'by-standby', 'Committed');
    expect(await data(clients.admin, ns.name, 'app')).toEqual({ v: '2' });
    await eventually(async () =>
      expect(await repo.subjects()).toEqual([
        `${ns.name}/by-leader: Pending (materialized, 1 change)`,
        `${ns.name}/by-leader: Committed (1/1 changes)`,
        `${ns.name}/by-standby: Pending (materialized, 1 change)`,
        `${ns.name}/by-standby: Committed (1/1 changes)`,
      ]),
    );
  });
});

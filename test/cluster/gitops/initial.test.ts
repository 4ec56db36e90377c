/**
 * The first run on a repository that already has transaction directories and no results branch:
 * by default they are recorded as baseline and never applied; with --initial=apply they are applied.
 */
import { describe, expect, it } from 'vitest';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  configMap,
  data,
  serviceAccount,
  txnRef,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { configMapYaml, createTestRepo, directory, morePolls, useGitServer, useJanus } from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'initial');
const server = useGitServer();
const janus = useJanus(clients);

const existing = () => ({
  ...directory('old-valid', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: 'old' }) } }),
  'transactions/old-broken/transaction.yaml': 'kind: [\n',
});

async function transactions(): Promise<string[]> {
  return (await clients.admin.list('tx.janus.io/v1alpha1', 'Transaction', ns.name)).items.map(
    (t) => t.metadata.name,
  );
}

describe('first run', () => {
  it('records existing directories as baseline by default, then applies only new ones', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    const repo = await createTestRepo(server.server, existing());
    const run = await janus.start({ repo: repo.url, namespace: ns.name });

    await eventually(async () =>
      expect(await repo.subjects()).toEqual(['Baseline: 2 existing directories recorded, none applied']),
    );
    expect(await repo.baseline()).toMatchObject({
      kind: 'TransactionBaseline',
      source: { repository: repo.url, revision: expect.stringMatching(/^main@sha1:[0-9a-f]{40}$/) },
      directories: ['transactions/old-broken', 'transactions/old-valid'],
    });
    expect(await repo.result(ns.name, 'old-valid')).toBeUndefined();
    expect(await repo.log()).toContain('Janus-Phase: Baseline');

    await repo.push(
      directory('new-one', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: 'new' }) } }),
    );
    await waitForPhase(clients.admin, ns.name, 'new-one', 'Committed');
    // Its record is written after the phase; the edit below is checked as the newest records.
    await eventually(async () => expect((await repo.result(ns.name, 'new-one'))?.phase).toBe('Committed'));
    await repo.push(
      { 'transactions/old-valid/10-app.patch.yaml': configMapYaml('app', { v: 'edited' }) },
      'edit',
    );
    await repo.push({ 'transactions/old-valid/ROLLBACK': 'undo it\n' }, 'roll back a baseline directory');
    await eventually(async () =>
      expect((await repo.subjects()).slice(-2)).toEqual([
        `${ns.name}/old-valid: edit ignored (already materialized)`,
        `${ns.name}/old-valid: rollback ignored (baseline, never applied)`,
      ]),
    );
    await morePolls(run, 2);
    expect(await transactions()).toEqual(['new-one']);
    expect(await data(clients.admin, ns.name, 'app')).toEqual({ v: 'new' });
  });

  it('applies existing directories with --initial=apply', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    await clients.admin.create(configMap(ns.name, 'other', { v: '1' }));
    const repo = await createTestRepo(server.server, {
      ...existing(),
      ...directory('old-other', { changes: { '10-other.patch.yaml': configMapYaml('other', { v: 'old' }) } }),
    });
    await janus.start({ repo: repo.url, namespace: ns.name, args: ['--initial', 'apply'] });

    await waitForPhase(clients.admin, ns.name, 'old-valid', 'Committed');
    await waitForPhase(clients.admin, ns.name, 'old-other', 'Committed');
    expect(await data(clients.admin, ns.name, 'app')).toEqual({ v: 'old' });
    await eventually(async () => expect((await repo.result(ns.name, 'old-broken'))?.phase).toBe('Rejected'));
    expect(await clients.admin.find(txnRef(ns.name, 'old-broken'))).toBeUndefined();
    expect((await repo.subjects()).filter((s) => s.startsWith('Baseline'))).toEqual([]);
  });
});

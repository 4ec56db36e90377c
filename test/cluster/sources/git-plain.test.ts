/**
 * A plain folder as a source, through `janus run` and a real Git server: each commit that changes
 * what it renders is one Transaction (<source>-<7 hex>), Committed, recorded on the results branch
 * with its source and render; the Source's status follows (kubectl get sources); pruning deletes
 * what the render dropped when the source prunes, and never a Namespace or an object whose render
 * said prune: disabled, which the record says were left; a commit that changes nothing the source
 * renders makes no transaction; a file removed deletes its Source and leaves its objects.
 */
import { describe, expect, it } from 'vitest';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { configMap, data, serviceAccount, waitForPhase } from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { createTestRepo, morePolls, recordedPhase, useGitServer, useJanus } from '../gitops/harness.ts';
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
const ns = useNamespace(clients, 'src-plain');
const git = useGitServer();
const janus = useJanus(clients);

const cm = (name: string, values: Record<string, string>, annotations?: Record<string, string>) => ({
  ...configMap(ns.name, name, values),
  metadata: { name, ...(annotations && { annotations }) },
});

describe('a plain folder as a source', () => {
  it('applies each commit that changes its render as one transaction, prunes, and leaves what may not be pruned', {
    timeout: 600_000,
  }, async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', SOURCE_DEPLOYER);
    const repo = await createTestRepo(git.server);
    const run = await janus.start({ repo: repo.url, namespace: ns.name, args: sourceFlags() });

    const first = await repo.push({
      ...declaration('app', ns.name, { path: 'deploy/app', plain: {}, prune: true }),
      'deploy/app/config.yaml': yamlDocuments(
        cm('settings', { mode: 'blue' }),
        cm('old', { gone: 'soon' }),
        cm('kept', { stays: 'yes' }, { 'tx.janus.io/prune': 'disabled' }),
      ),
    });
    const name1 = `app-${first.slice(0, 7)}`;
    const txn1 = await waitForPhase(clients.admin, ns.name, name1, 'Committed', 180_000);
    expect(txn1.spec.sourceRef).toEqual({ name: 'app' });
    expect(txn1.spec.changes.map((c) => `${c.type} ${c.target.name}`)).toEqual([
      'Apply settings',
      'Apply old',
      'Apply kept',
    ]);
    const applied = await untilSource(clients.admin, ns.name, 'app', attempted(first, 'Committed'));
    expect(applied.status?.lastApplied).toMatchObject({
      revision: first,
      shortRevision: first.slice(0, 7),
      transaction: name1,
    });
    expect(applied.status?.inventory?.map((e) => e.name)).toEqual(['settings', 'old', 'kept']);
    expect(applied.status?.inventory?.[2]?.pruneDisabled).toBe(true);
    expect(applied.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    const record1 = await recordedPhase(repo, ns.name, name1, 'Committed');
    expect(record1.source).toMatchObject({ path: 'sources/app.yaml', revision: `main@sha1:${first}` });
    expect(record1.render).toMatchObject({ source: 'app' });

    // A commit outside the source's folder: no transaction, and the source moves to it.
    const unrelated = await repo.push({ 'README.md': 'docs only\n' });
    await untilSource(clients.admin, ns.name, 'app', attempted(unrelated, 'Committed'));
    expect((await sourceTransactions(clients.admin, ns.name, 'app')).map((t) => t.metadata.name)).toEqual([
      name1,
    ]);

    // Commit 2 changes one object and drops two: one is pruned, the other left (prune: disabled).
    const second = await repo.push({
      'deploy/app/config.yaml': yamlDocuments(cm('settings', { mode: 'green' })),
    });
    const name2 = `app-${second.slice(0, 7)}`;
    const txn2 = await waitForPhase(clients.admin, ns.name, name2, 'Committed', 180_000);
    expect(txn2.spec.changes.map((c) => `${c.type} ${c.target.name}`)).toEqual([
      'Apply settings',
      'Delete old',
    ]);
    expect(await data(clients.admin, ns.name, 'settings')).toEqual({ mode: 'green' });
    expect(await data(clients.admin, ns.name, 'old')).toBeUndefined();
    expect(await data(clients.admin, ns.name, 'kept')).toEqual({ stays: 'yes' });
    const after = await untilSource(clients.admin, ns.name, 'app', attempted(second, 'Committed'));
    expect(after.status?.inventory?.map((e) => e.name)).toEqual(['settings']);
    const record2 = await recordedPhase(repo, ns.name, name2, 'Committed');
    expect(record2.render).toMatchObject({
      left: [
        `v1 ConfigMap ${ns.name}/kept is left in the cluster: its render set tx.janus.io/prune: disabled`,
      ],
    });

    // The file removed: the Source goes, what it applied stays.
    await repo.push({ 'sources/app.yaml': null });
    await morePolls(run, 2);
    await eventually(async () => {
      if (await getSource(clients.admin, ns.name, 'app')) throw new Error('the Source is still there');
    });
    expect(await data(clients.admin, ns.name, 'settings')).toEqual({ mode: 'green' });
  });

  it('without prune, leaves what the render dropped and says so', { timeout: 600_000 }, async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', SOURCE_DEPLOYER);
    const repo = await createTestRepo(git.server);
    await janus.start({ repo: repo.url, namespace: ns.name, args: sourceFlags() });
    const first = await repo.push({
      ...declaration('keep', ns.name, { path: 'app', plain: { recurse: true } }),
      'app/a.yaml': yamlDocuments(cm('a', { v: '1' })),
      'app/more/b.yaml': yamlDocuments(cm('b', { v: '1' })),
    });
    await untilSource(clients.admin, ns.name, 'keep', attempted(first, 'Committed'));
    expect(await data(clients.admin, ns.name, 'b')).toEqual({ v: '1' });
    const second = await repo.push({
      'app/more/b.yaml': null,
      'app/a.yaml': yamlDocuments(cm('a', { v: '2' })),
    });
    const name = `keep-${second.slice(0, 7)}`;
    const txn = await waitForPhase(clients.admin, ns.name, name, 'Committed', 180_000);
    expect(txn.spec.changes.map((c) => `${c.type} ${c.target.name}`)).toEqual(['Apply a']);
    expect(await data(clients.admin, ns.name, 'b')).toEqual({ v: '1' });
    const source = await untilSource(clients.admin, ns.name, 'keep', attempted(second, 'Committed'));
    expect(source.status?.inventory?.map((e) => e.name)).toEqual(['a']);
    const record = await recordedPhase(repo, ns.name, name, 'Committed');
    expect(record.render).toMatchObject({
      left: [
        `v1 ConfigMap ${ns.name}/b is left in the cluster: the source does not prune (spec.prune is false)`,
      ],
    });
  });
});

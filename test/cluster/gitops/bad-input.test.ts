/**
 * Every kind of bad input is reported on the results branch for its own directory, precisely,
 * while the rest of the same commit applies normally and the poller keeps going.
 */
import { describe, expect, it } from 'vitest';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import {
  ALL_ON_CONFIGMAPS,
  configMap,
  data,
  getTxn,
  serviceAccount,
  waitForPhase,
} from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { configMapYaml, createTestRepo, directory, morePolls, useGitServer, useJanus } from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'bad-input');
const git = useGitServer();
const janus = useJanus(clients);

interface RecordedError {
  file: string;
  line?: number;
  field?: string;
  code: string;
  message: string;
}

const txnYaml = (name: string, body: string) =>
  `apiVersion: tx.janus.io/v1alpha1\nkind: Transaction\nmetadata:\n  name: ${name}\n${body}`;

describe('bad input', () => {
  it('rejects each invalid directory with a precise message and applies the valid one', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    const repo = await createTestRepo(git.server);
    await janus.start({ repo: repo.url, namespace: ns.name, args: ['--allowed-namespaces', ns.name] });

    const patch = configMapYaml('app', { v: '2' });
    await repo.push(
      {
        ...directory('good', { changes: { '10-app.patch.yaml': patch } }),
        'transactions/broken-yaml/transaction.yaml': txnYaml(
          'broken-yaml',
          'spec:\n  serviceAccountName: deployer\n  serviceAccountName: other\n',
        ),
        'transactions/broken-yaml/10-app.patch.yaml': patch,
        'transactions/wrong-kind/transaction.yaml': txnYaml(
          'wrong-kind',
          'spec:\n  serviceAccountName: deployer\n',
        ).replace('kind: Transaction', 'kind: Transactoin'),
        'transactions/wrong-kind/10-app.patch.yaml': patch,
        ...directory('Bad_Name', { changes: { '10-app.patch.yaml': patch } }),
        ...directory('duplicate', {
          changes: {
            '10-app.patch.yaml': patch,
            '20-app-again.update.yaml': configMapYaml('app', { v: '3' }),
          },
        }),
        ...directory('oversized', {
          changes: { '10-big.create.yaml': configMapYaml('big', { blob: 'x'.repeat(1024 * 1024 + 1) }) },
        }),
        ...directory('elsewhere', { namespace: 'not-allowed', changes: { '10-app.patch.yaml': patch } }),
      },
      'one good and six bad directories',
    );

    await waitForPhase(clients.admin, ns.name, 'good', 'Committed');
    expect(await data(clients.admin, ns.name, 'app')).toEqual({ v: '2' });

    const rejected = async (name: string, namespace = ns.name): Promise<RecordedError[]> =>
      eventually(async () => {
        const result = await repo.result(namespace, name);
        if (result?.phase !== 'Rejected') throw new Error(`${name}: ${String(result?.phase)}`);
        return result.errors as RecordedError[];
      });

    expect(await rejected('broken-yaml')).toEqual([
      expect.objectContaining({
        file: 'transactions/broken-yaml/transaction.yaml',
        code: 'yaml-syntax',
        line: 7,
        column: 3,
        message: 'YAML syntax error: Map keys must be unique',
      }),
    ]);
    expect(await rejected('wrong-kind')).toEqual([
      expect.objectContaining({
        file: 'transactions/wrong-kind/transaction.yaml',
        field: 'kind',
        code: 'wrong-kind',
        line: 2,
        message: 'must be Transaction, found "Transactoin"',
      }),
    ]);
    expect(await rejected('Bad_Name')).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ file: 'transactions/Bad_Name', code: 'invalid-directory-name' }),
      ]),
    );
    expect(await rejected('duplicate')).toEqual([
      expect.objectContaining({
        file: 'transactions/duplicate/20-app-again.update.yaml',
        code: 'duplicate-target',
        message: expect.stringContaining('is already changed by transactions/duplicate/10-app.patch.yaml'),
      }),
    ]);
    expect(await rejected('oversized')).toEqual([
      expect.objectContaining({ file: 'transactions/oversized/10-big.create.yaml', code: 'file-too-large' }),
    ]);
    // A namespace the repository may not use is not where the outcome is recorded: it is the
    // repository's own, under the controller's namespace.
    expect(await repo.result('not-allowed', 'elsewhere')).toBeUndefined();
    expect(await rejected('elsewhere', 'janus-system')).toEqual([
      expect.objectContaining({
        file: 'transactions/elsewhere/transaction.yaml',
        field: 'metadata.namespace',
        code: 'namespace-not-allowed',
        message:
          `namespace "not-allowed" is not allowed for this repository (allowed: ${ns.name}; ` +
          'set by --allowed-namespaces or JANUS_ALLOWED_NAMESPACES)',
      }),
    ]);
    // The Committed record is written after the phase is; the rejections may all be on record first.
    const subjects = await eventually(async () => {
      const all = await repo.subjects();
      if (!all.includes(`${ns.name}/good: Committed (1/1 changes)`)) throw new Error(all.join('\n'));
      return all;
    });
    expect(subjects).toContain(`${ns.name}/wrong-kind: Rejected (1 error)`);
    // The poll's own records reach the results branch in Git (tree) order: the valid directory's
    // Pending record, queued while the next directory is read, between the rejections around it.
    const recorded = subjects
      .filter((s) => / (Pending|Rejected) \(/.test(s))
      .map((s) => s.slice(s.indexOf('/') + 1, s.indexOf(':')));
    expect(recorded).toEqual([
      'Bad_Name',
      'broken-yaml',
      'duplicate',
      'elsewhere',
      'good',
      'oversized',
      'wrong-kind',
    ]);
    // Nothing but the valid directory became a Transaction.
    const names = (await clients.admin.list('tx.janus.io/v1alpha1', 'Transaction', ns.name)).items.map(
      (t) => t.metadata.name,
    );
    expect(names).toEqual(['good']);
  });

  it('treats a commit of many directories, parsed on a thread of its own, as it treats one', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    const repo = await createTestRepo(git.server);
    const run = await janus.start({ repo: repo.url, namespace: ns.name });
    const names = Array.from({ length: 20 }, (_, i) => `many-${String(i).padStart(2, '0')}`);
    const files = Object.assign(
      {},
      ...names.map((name) =>
        directory(name, { changes: { '10-cm.create.yaml': configMapYaml(`cm-${name}`, { from: name }) } }),
      ),
    );
    files['transactions/many-03/20-broken.create.yaml'] = 'kind: [';
    await repo.push(files, 'twenty directories, one broken');

    await eventually(async () => {
      const subjects = await repo.subjects();
      const committed = subjects.filter((s) => s.endsWith(': Committed (1/1 changes)'));
      if (committed.length < 19) throw new Error(subjects.join('\n'));
    });
    for (const name of names.filter((n) => n !== 'many-03')) {
      expect(await data(clients.admin, ns.name, `cm-${name}`)).toEqual({ from: name });
    }
    expect((await repo.result(ns.name, 'many-03'))?.errors).toEqual([
      expect.objectContaining({ file: 'transactions/many-03/20-broken.create.yaml', code: 'yaml-syntax' }),
    ]);
    // In Git order, as a poll of few directories records them.
    const recorded = (await repo.subjects())
      .filter((s) => / (Pending|Rejected) \(/.test(s))
      .map((s) => s.slice(s.indexOf('/') + 1, s.indexOf(':')));
    expect(recorded).toEqual(names);
    const log = await run.logs();
    expect(log).toContain('parsing on a thread of its own');
    expect(log).not.toContain('the parse thread stopped');
  });

  it('reports a Transaction the cluster cannot run (unknown target kind) as Failed', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    const repo = await createTestRepo(git.server);
    await janus.start({ repo: repo.url, namespace: ns.name });
    await repo.push(
      directory('unknown-kind', {
        changes: { '10-thing.create.yaml': 'apiVersion: v1\nkind: ConfigMapp\nmetadata:\n  name: thing\n' },
      }),
    );
    const result = await eventually(async () => {
      const r = await repo.result(ns.name, 'unknown-kind');
      if (r?.phase !== 'Failed') throw new Error(String(r?.phase));
      return r;
    });
    expect(String(result.message)).toContain('ConfigMapp');
  });

  it('ignores an edit to a materialized directory and reports it, changing nothing in the cluster', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    const repo = await createTestRepo(git.server);
    const run = await janus.start({ repo: repo.url, namespace: ns.name });
    await repo.push(
      directory('once', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }),
    );
    const before = await waitForPhase(clients.admin, ns.name, 'once', 'Committed');
    // Its record is written after the phase; the edit's record below must come after it.
    await eventually(async () => expect((await repo.result(ns.name, 'once'))?.phase).toBe('Committed'));

    const edit = await repo.push(
      { 'transactions/once/10-app.patch.yaml': configMapYaml('app', { v: '3' }) },
      'try to change a materialized directory',
    );
    await eventually(async () => {
      expect((await repo.subjects()).at(-1)).toBe(`${ns.name}/once: edit ignored (already materialized)`);
    });
    expect(await repo.log()).toContain(`Janus-Source: ${edit}`);
    expect(await repo.log()).toContain('transactions/once/10-app.patch.yaml');
    await morePolls(run, 2);
    const after = await getTxn(clients.admin, ns.name, 'once');
    expect(after.metadata.uid).toBe(before.metadata.uid);
    expect(after.spec).toEqual(before.spec);
    expect(await data(clients.admin, ns.name, 'app')).toEqual({ v: '2' });
    expect((await repo.result(ns.name, 'once'))?.phase).toBe('Committed');

    // Deleting the directory changes nothing either.
    await repo.push({ 'transactions/once': null }, 'remove the directory');
    await morePolls(run, 2);
    expect((await getTxn(clients.admin, ns.name, 'once')).metadata.uid).toBe(before.metadata.uid);
    expect(await data(clients.admin, ns.name, 'app')).toEqual({ v: '2' });
  });
});

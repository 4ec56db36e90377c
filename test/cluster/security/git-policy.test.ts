/**
 * A repository gets only what its policy grants: a directory that names another ServiceAccount,
 * the controller's namespace, or a target in kube-* is refused on the results branch with file and
 * line, and nothing of it reaches the cluster; with the shipped default (no ServiceAccount) every
 * directory is refused; a policy naming a reserved namespace stops janus run at start.
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
import { startJanusRun } from '../../support/processes/janus-run.ts';
import {
  configMapYaml,
  createTestRepo,
  directory,
  type TestRepo,
  useGitServer,
  useJanus,
} from '../gitops/harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'policy');
const git = useGitServer();
const janus = useJanus(clients);

interface RecordedError {
  file: string;
  line?: number;
  column?: number;
  field?: string;
  code: string;
  message: string;
}

async function rejected(repo: TestRepo, namespace: string, name: string): Promise<RecordedError[]> {
  return eventually(
    async () => {
      const result = await repo.result(namespace, name);
      if (result?.phase !== 'Rejected') throw new Error(`${name}: ${String(result?.phase)}`);
      return result.errors as RecordedError[];
    },
    { timeoutMs: 90_000 },
  );
}

async function transactionNames(namespace: string): Promise<string[]> {
  return (await clients.admin.list('tx.janus.io/v1alpha1', 'Transaction', namespace)).items.map(
    (t) => t.metadata.name,
  );
}

describe("the repository's policy", () => {
  it('refuses what it does not grant, on the results branch with file and line, creating nothing', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    // It exists and could do the change: only the policy stands in the way.
    await serviceAccount(clients.admin, ns.name, 'admin', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    const repo = await createTestRepo(git.server);
    // The harness's policy: the namespace alone (the default), the ServiceAccount "deployer".
    await janus.start({ repo: repo.url, namespace: ns.name });

    const probe = configMapYaml('janus-policy-probe', { owned: 'by a Git pusher' }).replace(
      'name: janus-policy-probe\n',
      'name: janus-policy-probe\n  namespace: kube-system\n',
    );
    await repo.push(
      {
        ...directory('good', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }),
        ...directory('as-admin', {
          serviceAccount: 'admin',
          changes: { '10-app.patch.yaml': configMapYaml('app', { v: 'admin' }) },
        }),
        ...directory('in-janus-system', {
          namespace: 'janus-system',
          changes: { '10-probe.create.yaml': configMapYaml('janus-policy-probe', { v: '1' }) },
        }),
        ...directory('reach-kube-system', { changes: { '10-probe.create.yaml': probe } }),
      },
      'one allowed directory and three the policy refuses',
    );

    await waitForPhase(clients.admin, ns.name, 'good', 'Committed');
    expect(await data(clients.admin, ns.name, 'app')).toEqual({ v: '2' });

    expect(await rejected(repo, ns.name, 'as-admin')).toEqual([
      expect.objectContaining({
        file: 'transactions/as-admin/transaction.yaml',
        line: 6,
        column: 23,
        field: 'spec.serviceAccountName',
        code: 'service-account-not-allowed',
        message:
          `ServiceAccount "${ns.name}/admin" is not allowed for this repository (allowed: deployer; ` +
          'set by --allowed-service-accounts or JANUS_ALLOWED_SERVICE_ACCOUNTS)',
      }),
    ]);
    // A namespace the repository may not use is not where a rejection is recorded: the controller's
    // is, as the repository's own (here the two are the same).
    expect(await rejected(repo, 'janus-system', 'in-janus-system')).toEqual([
      expect.objectContaining({
        file: 'transactions/in-janus-system/transaction.yaml',
        line: 5,
        field: 'metadata.namespace',
        code: 'namespace-not-allowed',
        message: `namespace "janus-system" is the controller's own namespace: no repository may use it`,
      }),
    ]);
    expect(await rejected(repo, ns.name, 'reach-kube-system')).toEqual([
      expect.objectContaining({
        file: 'transactions/reach-kube-system/10-probe.create.yaml',
        line: 5,
        column: 14,
        field: 'metadata.namespace',
        code: 'target-namespace-not-allowed',
      }),
    ]);

    const subjects = await repo.subjects();
    expect(subjects).toContain(`${ns.name}/as-admin: Rejected (1 error)`);
    expect(subjects).toContain('janus-system/in-janus-system: Rejected (1 error)');
    expect(subjects).toContain(`${ns.name}/reach-kube-system: Rejected (1 error)`);
    // The commit says where, as file:line:column, for whoever reads git log.
    expect(await repo.log()).toContain(
      'transactions/reach-kube-system/10-probe.create.yaml:5:14: metadata.namespace: the target\'s namespace "kube-system" is a Kubernetes system namespace (kube-*): no repository may use it',
    );

    // Nothing but the allowed directory reached the cluster.
    expect(await transactionNames(ns.name)).toEqual(['good']);
    expect(await transactionNames('janus-system')).not.toContain('in-janus-system');
    for (const namespace of ['kube-system', 'janus-system']) {
      expect(
        await clients.admin.find({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          namespace,
          name: 'janus-policy-probe',
        }),
      ).toBeUndefined();
    }
  });

  it('refuses every directory with the shipped default, saying how to allow a ServiceAccount', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    const repo = await createTestRepo(git.server);
    const run = await janus.start({ repo: repo.url, namespace: ns.name, serviceAccounts: '' });
    await repo.push(
      directory('deploy', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }),
    );
    expect(await rejected(repo, ns.name, 'deploy')).toEqual([
      expect.objectContaining({
        file: 'transactions/deploy/transaction.yaml',
        line: 6,
        code: 'service-account-not-allowed',
        message: expect.stringContaining('--allowed-service-accounts or JANUS_ALLOWED_SERVICE_ACCOUNTS'),
      }),
    ]);
    expect(await transactionNames(ns.name)).toEqual([]);
    expect(await data(clients.admin, ns.name, 'app')).toEqual({ v: '1' });
    expect(await run.logs()).toContain('no ServiceAccount is allowed');
  });

  it('reports a directory for a namespace the policy allows but that never opted in, and goes on', async () => {
    await serviceAccount(clients.admin, ns.name, 'deployer', [ALL_ON_CONFIGMAPS]);
    await clients.admin.create(configMap(ns.name, 'app', { v: '1' }));
    const closed = `policy-closed-${ns.name.slice(-6)}`;
    await clients.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: closed } });
    try {
      await serviceAccount(clients.admin, closed, 'deployer', [ALL_ON_CONFIGMAPS]);
      const repo = await createTestRepo(git.server);
      await janus.start({
        repo: repo.url,
        namespace: ns.name,
        args: ['--allowed-namespaces', `${ns.name},${closed}`],
      });
      await repo.push({
        ...directory('not-opted-in', {
          namespace: closed,
          changes: { '10-app.create.yaml': configMapYaml('app', { v: '1' }) },
        }),
        ...directory('good', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }),
      });
      expect(await rejected(repo, closed, 'not-opted-in')).toEqual([
        expect.objectContaining({
          file: 'transactions/not-opted-in/transaction.yaml',
          field: 'metadata.namespace',
          message: expect.stringContaining(`Janus has not been granted namespace "${closed}"`),
        }),
      ]);
      await waitForPhase(clients.admin, ns.name, 'good', 'Committed');
      expect(await transactionNames(closed)).toEqual([]);
    } finally {
      await clients.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: closed });
    }
  });

  it("stops janus run at start when the policy names the controller's namespace or kube-*", async () => {
    for (const [args, message] of [
      [
        ['--allowed-namespaces', `${ns.name},janus-system`],
        `--allowed-namespaces (JANUS_ALLOWED_NAMESPACES): "janus-system" is the controller's own namespace`,
      ],
      [
        ['--allowed-service-accounts', 'kube-system/default'],
        '--allowed-service-accounts (JANUS_ALLOWED_SERVICE_ACCOUNTS): "kube-system/default": "kube-system" is a Kubernetes system namespace (kube-*)',
      ],
    ] as const) {
      const run = await startJanusRun({
        kubeconfig: clients.kubeconfigs.controller,
        repo: 'https://git.invalid/never-contacted.git',
        namespace: ns.name,
        args: [...args],
      });
      expect(await run.exited, args.join(' ')).toBe(2);
      expect(await run.logs()).toContain(message);
    }
  });
});

/** `janus plan` against a real API server: server-side dry runs, per-resource diffs, exit codes. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useClients } from '../../support/cluster/kube.ts';
import { configMap, data, serviceAccount } from '../../support/cluster/saga.ts';
import { janus } from '../../support/processes/cli.ts';

const clients = useClients();
/** The repository's policy, as janus run would have it: the test namespace and its ServiceAccounts. */
const policy = () => ({
  JANUS_ALLOWED_NAMESPACES: ns,
  JANUS_ALLOWED_SERVICE_ACCOUNTS: 'deployer,reader,missing-sa',
});
const as = () => ({ kubeconfig: clients.kubeconfigs.admin, env: policy() });
let ns = '';
let repo = '';

const header = (name: string, serviceAccountName: string) => `apiVersion: tx.janus.io/v1alpha1
kind: Transaction
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  serviceAccountName: ${serviceAccountName}
`;
const manifest = (kind: string, name: string, body: string) =>
  `apiVersion: v1\nkind: ${kind}\nmetadata:\n  name: ${name}\n  namespace: ${ns}\n${body}`;

async function write(files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), text);
  }
}

beforeAll(async () => {
  ns = `cli-plan-${Math.random().toString(16).slice(2, 8)}`;
  await clients.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const all = ['get', 'create', 'update', 'patch', 'delete'];
  await serviceAccount(clients.admin, ns, 'deployer', [
    { apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: all },
  ]);
  await serviceAccount(clients.admin, ns, 'reader', [
    { apiGroups: [''], resources: ['configmaps'], verbs: ['get'] },
  ]);
  await clients.admin.create(configMap(ns, 'settings', { mode: 'old', kept: 'yes' }));
  await clients.admin.create(configMap(ns, 'legacy', { gone: 'soon' }));
  await clients.admin.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'token', namespace: ns },
    stringData: { key: 'old-secret-value' },
  });
  repo = await mkdtemp(join(tmpdir(), 'janus-plan-'));
  await write({
    'transactions/release/transaction.yaml': header('release', 'deployer'),
    'transactions/release/10-settings.patch.yaml': manifest('ConfigMap', 'settings', 'data:\n  mode: new\n'),
    'transactions/release/20-fresh.create.yaml': manifest('ConfigMap', 'fresh', 'data:\n  hello: world\n'),
    'transactions/release/30-legacy.delete.yaml': manifest('ConfigMap', 'legacy', ''),
    'transactions/release/40-token.update.yaml': manifest(
      'Secret',
      'token',
      'stringData:\n  key: new-secret-value\n',
    ),
    'transactions/same-token/transaction.yaml': header('same-token', 'deployer'),
    'transactions/same-token/10-token.update.yaml': manifest(
      'Secret',
      'token',
      'stringData:\n  key: old-secret-value\n',
    ),
    'transactions/noop/transaction.yaml': header('noop', 'deployer'),
    'transactions/noop/10-settings.patch.yaml': manifest('ConfigMap', 'settings', 'data:\n  kept: "yes"\n'),
    'limited/denied/transaction.yaml': header('denied', 'reader'),
    'limited/denied/10-settings.patch.yaml': manifest('ConfigMap', 'settings', 'data:\n  mode: new\n'),
    'orphan/nobody/transaction.yaml': header('nobody', 'missing-sa'),
    'orphan/nobody/10-settings.patch.yaml': manifest('ConfigMap', 'settings', 'data:\n  mode: new\n'),
    'broken/bad/transaction.yaml': header('bad', 'deployer'),
    'broken/bad/10-x.patch.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: Not_A_Name\n',
  });
});

afterAll(async () => {
  await rm(repo, { recursive: true, force: true });
  await clients.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => {});
});

describe('janus plan', () => {
  it('shows what each change would do, as a diff, and exits 1 when something would change', async () => {
    const result = await janus(['plan', 'transactions/release'], { ...as(), cwd: repo });
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(
      `Transaction ${ns}/release (transactions/release), dry run as system:serviceaccount:${ns}:deployer`,
    );
    expect(result.stderr).toMatch(
      /\[0\] Patch v1 ConfigMap \S+\/settings: would change\n[\s\S]*?- {2}mode: old\n\+ {2}mode: new\n/,
    );
    expect(result.stderr).toMatch(
      /\[1\] Create v1 ConfigMap \S+\/fresh: would be created\n[\s\S]*?\+ {2}hello: world\n/,
    );
    expect(result.stderr).toMatch(
      /\[2\] Delete v1 ConfigMap \S+\/legacy: would be deleted\n[\s\S]*?- {2}gone: soon\n/,
    );
    expect(result.stderr).toMatch(/\[3\] Update v1 Secret \S+\/token: would change/);
    expect(result.stderr).toContain(`${ns}/release: 1 to create, 2 to update, 1 to delete, 0 unchanged`);
    expect(result.stderr).not.toMatch(/managedFields|resourceVersion:|uid:/);
    expect(result.code).toBe(1);
  });

  it('never shows Secret values, and changes nothing (a dry run)', async () => {
    const result = await janus(['plan', join(repo, 'transactions/release')], as());
    expect(result.stderr).not.toContain('secret-value');
    expect(result.stderr).not.toContain(Buffer.from('old-secret-value').toString('base64'));
    expect(result.stderr).toContain('values not compared');
    expect(result.stderr).not.toMatch(/\(before\)|\(after\)/);
    expect(await data(clients.admin, ns, 'settings')).toEqual({ mode: 'old', kept: 'yes' });
    expect(await data(clients.admin, ns, 'legacy')).toEqual({ gone: 'soon' });
    expect(await data(clients.admin, ns, 'fresh')).toBeUndefined();
  });

  it("never tells whether a Secret's value is the live one: the right value and another plan alike", async () => {
    const changeOf = async (dir: string, index: number) => {
      const result = await janus(['plan', join(repo, dir), '-o', 'json'], as());
      const [plan] = JSON.parse(result.stdout) as { changes: { index: number }[] }[];
      return { ...plan?.changes[index], index: 0 };
    };
    const kept = await changeOf('transactions/same-token', 0);
    expect(kept).toMatchObject({ action: 'update', note: expect.stringContaining('never compared') });
    expect(await changeOf('transactions/release', 3)).toEqual(kept);
  });

  it('exits 0 when nothing would change', async () => {
    const result = await janus(['plan', join(repo, 'transactions/noop')], as());
    expect(result.stderr).toMatch(/\[0\] Patch v1 ConfigMap \S+\/settings: no change/);
    expect(result.code).toBe(0);
  });

  it('plans every directory of a repository root, with machine output on stdout', async () => {
    const json = await janus(['plan', repo, '-o', 'json'], as());
    expect(json.stderr).toBe('');
    const plans = JSON.parse(json.stdout) as { name: string; changes: { action: string }[] }[];
    expect(plans.map((p) => [p.name, p.changes.map((c) => c.action)])).toEqual([
      ['noop', ['unchanged']],
      ['release', ['update', 'create', 'delete', 'update']],
      ['same-token', ['update']],
    ]);
    const diff = await janus(['plan', repo, '-o', 'diff'], as());
    expect(diff.stdout).toMatch(/^--- current v1 ConfigMap \S+\/settings\n\+\+\+ planned/);
    // The Secret's update shows no diff: only its values would change, and they are not compared.
    expect(diff.stdout.match(/^--- /gm)).toHaveLength(3);
  });

  it("runs as the transaction's ServiceAccount: an RBAC gap is refused (exit 2), unlike as yourself", async () => {
    const asSa = await janus(['plan', join(repo, 'limited/denied')], as());
    expect(asSa.stderr).toMatch(
      /\[0\] Patch v1 ConfigMap \S+\/settings: REFUSED\n\s+change 0 \(Patch ConfigMap \S+\/settings\): dry run refused: Forbidden: .*system:serviceaccount:\S+:reader/,
    );
    expect(asSa.code).toBe(2);
    const asMe = await janus(['plan', join(repo, 'limited/denied'), '--no-as-service-account'], as());
    expect(asMe.stderr).toContain('dry run as janus-test-admin');
    expect(asMe.code).toBe(1);
  });

  it('exits 2 for a missing ServiceAccount and for an invalid directory, naming file and line', async () => {
    const orphan = await janus(['plan', join(repo, 'orphan/nobody')], as());
    expect(orphan.stderr).toContain(`ServiceAccount ${ns}/missing-sa does not exist`);
    expect(orphan.code).toBe(2);
    // No cluster is needed to report an invalid directory.
    const broken = await janus(['plan', 'broken/bad'], {
      kubeconfig: '/nonexistent',
      cwd: repo,
      env: policy(),
    });
    expect(broken.stderr).toMatch(/broken\/bad\/10-x\.patch\.yaml:4:\d+: metadata\.name: /);
    expect(broken.code).toBe(2);
    const nothing = await janus(['plan', join(repo, 'broken/bad/10-x.patch.yaml')], as());
    expect(nothing.code).toBe(2);
  });

  it("refuses, without a cluster, what the repository's policy does not grant (exit 2)", async () => {
    // The shipped default: no ServiceAccount at all.
    const none = await janus(['plan', 'transactions/release'], { kubeconfig: '/nonexistent', cwd: repo });
    expect(none.stderr).toMatch(
      /transactions\/release\/transaction\.yaml:7:23: spec\.serviceAccountName: ServiceAccount "\S+\/deployer" is not allowed for this repository: .*--allowed-service-accounts or JANUS_ALLOWED_SERVICE_ACCOUNTS/,
    );
    expect(none.code).toBe(2);
    const otherNamespace = await janus(
      [
        'plan',
        'transactions/release',
        '--allowed-namespaces',
        'elsewhere',
        '--allowed-service-accounts',
        'deployer',
      ],
      { kubeconfig: '/nonexistent', cwd: repo },
    );
    expect(otherNamespace.stderr).toContain(
      `transactions/release/transaction.yaml:5:14: metadata.namespace: namespace "${ns}" is not allowed for this repository`,
    );
    expect(otherNamespace.stderr).toContain(
      `transactions/release/10-settings.patch.yaml:5:14: metadata.namespace: the target's namespace "${ns}" is not allowed`,
    );
    expect(otherNamespace.code).toBe(2);
    const usage = await janus(['plan', 'transactions/release', '--allowed-namespaces', 'kube-system'], {
      cwd: repo,
    });
    expect(usage.stderr).toMatch(/^janus: --allowed-namespaces \(JANUS_ALLOWED_NAMESPACES\): "kube-system"/);
    expect(usage.code).toBe(2);
  });
});

/** `janus validate` as CI runs it: a process, files on disk, exit status, stderr and stdout. */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { janus } from '../../support/processes/cli.ts';
import { configMapYaml, directory } from './harness.ts';

let repo: string;
beforeEach(async () => {
  repo = await mkdtemp(join(tmpdir(), 'janus-validate-'));
});
afterEach(async () => {
  await rm(repo, { recursive: true, force: true });
});

async function write(files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), content);
  }
}

/** The ServiceAccount directory() names, as janus run would be configured to allow it. */
const POLICY = { JANUS_ALLOWED_SERVICE_ACCOUNTS: 'deployer' };

const good = () => directory('good', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } });
const bad = () => ({
  ...directory('bad', { changes: { '10-app.patch.yaml': configMapYaml('app', { v: '2' }) } }),
  'transactions/bad/20-app.update.yaml': configMapYaml('app', { v: '3' }),
});

describe('janus validate', () => {
  it('exits 0 for a repository whose directories are all valid', async () => {
    await write(good());
    const result = await janus(['validate', '.'], { cwd: repo, env: POLICY });
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '1 transaction directory, all valid\n' });
  });

  it('exits 1 and prints file:line:column diagnostics for an invalid directory', async () => {
    await write({ ...good(), ...bad() });
    const result = await janus(['validate', repo, '-o', 'json', '--allowed-service-accounts', 'deployer']);
    expect(result.code).toBe(1);
    expect(result.stderr.split('\n')).toEqual([
      'transactions/bad/20-app.update.yaml:4:9: metadata.name: v1 ConfigMap default/app is already changed by ' +
        'transactions/bad/10-app.patch.yaml; each resource may appear in one change only',
      '2 transaction directories, 1 invalid',
      '',
    ]);
    const report = JSON.parse(result.stdout);
    expect(report.ok).toBe(false);
    expect(report.directories.map((d: { path: string; ok: boolean }) => [d.path, d.ok])).toEqual([
      ['transactions/bad', false],
      ['transactions/good', true],
    ]);
    expect(report.directories[0].diagnostics[0]).toMatchObject({
      code: 'duplicate-target',
      line: 4,
      column: 9,
    });
  });

  it('validates one directory, applies the namespace allow-list, and writes YAML on request', async () => {
    await write(
      directory('elsewhere', {
        namespace: 'prod',
        changes: { '10-app.patch.yaml': configMapYaml('app', {}) },
      }),
    );
    const result = await janus(
      ['validate', 'transactions/elsewhere', '--allowed-namespaces', 'staging', '-o', 'yaml'],
      { cwd: repo, env: POLICY },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'elsewhere/transaction.yaml:5:14: metadata.namespace: namespace "prod" is not allowed for this repository (allowed: staging; ',
    );
    expect(parse(result.stdout)).toMatchObject({
      ok: false,
      directories: [{ path: 'elsewhere', ok: false }],
    });
    const allowed = await janus(['validate', 'transactions/elsewhere'], {
      cwd: repo,
      env: { ...POLICY, JANUS_ALLOWED_NAMESPACES: 'prod,staging' },
    });
    expect(allowed.code).toBe(0);
  });

  it('allows no ServiceAccount by default, and says how to allow one', async () => {
    await write(good());
    const refused = await janus(['validate', '.'], { cwd: repo });
    expect(refused.code).toBe(1);
    expect(refused.stderr.split('\n')).toEqual([
      'transactions/good/transaction.yaml:6:23: spec.serviceAccountName: ServiceAccount "default/deployer" is ' +
        'not allowed for this repository: it may use no ServiceAccount until an administrator grants one with ' +
        '--allowed-service-accounts or JANUS_ALLOWED_SERVICE_ACCOUNTS (e.g. "deployer" in every allowed ' +
        'namespace, or "default/deployer")',
      '1 transaction directory, 1 invalid',
      '',
    ]);
    const other = await janus(['validate', '.', '--allowed-service-accounts', 'default/ci'], { cwd: repo });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('(allowed: default/ci; set by --allowed-service-accounts');
    const byNamespace = await janus(['validate', '.', '--allowed-service-accounts', 'default/deployer'], {
      cwd: repo,
    });
    expect(byNamespace.code).toBe(0);
  });

  it('refuses a target in a namespace the repository may not use, at its file and line', async () => {
    await write(
      directory('reach', {
        changes: {
          '10-dns.patch.yaml': configMapYaml('coredns', { v: '2' }).replace(
            'name: coredns\n',
            'name: coredns\n  namespace: kube-system\n',
          ),
        },
      }),
    );
    const result = await janus(['validate', '.'], { cwd: repo, env: POLICY });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(
      'transactions/reach/10-dns.patch.yaml:5:14: metadata.namespace: the target\'s namespace "kube-system" ' +
        'is a Kubernetes system namespace (kube-*): no repository may use it',
    );
  });

  it("exits 2 when the policy names the controller's namespace, kube-*, a wildcard", async () => {
    await write(good());
    for (const [args, message] of [
      [
        ['--allowed-namespaces', 'shop,janus-system'],
        `--allowed-namespaces (JANUS_ALLOWED_NAMESPACES): "janus-system" is the controller's own namespace`,
      ],
      [
        ['--allowed-namespaces', 'ops', '--controller-namespace', 'ops'],
        `--allowed-namespaces (JANUS_ALLOWED_NAMESPACES): "ops" is the controller's own namespace`,
      ],
      [
        ['--default-namespace', 'kube-system'],
        '--default-namespace (JANUS_DEFAULT_NAMESPACE): "kube-system" is a Kubernetes system namespace (kube-*)',
      ],
      [
        ['--allowed-namespaces', '*'],
        '--allowed-namespaces (JANUS_ALLOWED_NAMESPACES): "*": there is no wildcard',
      ],
      [
        ['--allowed-service-accounts', 'kube-system/admin'],
        '--allowed-service-accounts (JANUS_ALLOWED_SERVICE_ACCOUNTS): "kube-system/admin": "kube-system" is a Kubernetes system namespace',
      ],
    ] as const) {
      const result = await janus(['validate', '.', ...args], { cwd: repo });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
    }
    const fromEnv = await janus(['validate', '.'], {
      cwd: repo,
      env: { JANUS_ALLOWED_NAMESPACES: 'kube-public' },
    });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toMatch(
      /^janus: --allowed-namespaces \(JANUS_ALLOWED_NAMESPACES\): "kube-public"/,
    );
  });

  it('exits 2 on usage errors', async () => {
    for (const args of [['no-such-dir'], ['.', '-o', 'xml'], ['.', 'extra'], ['.', '--bogus']]) {
      const result = await janus(['validate', ...args], { cwd: repo });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(/^janus: /);
    }
  });
});

/**
 * `janus validate` of a repository's sources, as CI runs it (a process, files on disk): each
 * declaration read as janus run reads it, rendered offline from the folder with the real
 * kustomize and helm, and every object checked against the policy; exit status as for directories.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { janus } from '../../support/processes/cli.ts';
import { declaration, sourceFlags, yamlDocuments } from './harness.ts';

let repo: string;
beforeEach(async () => {
  repo = await mkdtemp(join(tmpdir(), 'janus-validate-sources-'));
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

const POLICY = ['--default-namespace', 'shop', '--allowed-service-accounts', 'deployer'];
const configMap = (name: string, namespace?: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(namespace && { namespace }) },
  data: { name },
});

describe('janus validate with sources', () => {
  it('renders each source offline and exits 0 when every one renders within the policy', async () => {
    await write({
      ...declaration('web', 'shop', { path: 'deploy/web', kustomize: {} }),
      'deploy/web/kustomization.yaml': yamlDocuments({
        resources: ['config.yaml'],
        configMapGenerator: [{ name: 'env', literals: ['A=1'] }],
      }),
      'deploy/web/config.yaml': yamlDocuments(configMap('settings')),
      ...declaration('plain', 'shop', { path: 'deploy/plain', plain: {} }),
      'deploy/plain/a.yaml': yamlDocuments(configMap('a')),
    });
    const result = await janus(['validate', '.', ...POLICY, ...sourceFlags(), '-o', 'json'], { cwd: repo });
    expect(result).toMatchObject({ code: 0, stderr: '2 sources, all valid\n' });
    const report = JSON.parse(result.stdout);
    expect(report.sources.map((s: { file: string; objects: number }) => [s.file, s.objects])).toEqual([
      ['sources/plain.yaml', 1],
      ['sources/web.yaml', 2],
    ]);
  });

  it("exits 1, naming the tool's file and line, a refused object, and a declaration's field", async () => {
    await write({
      ...declaration('broken', 'shop', { path: 'deploy/broken', kustomize: {} }),
      'deploy/broken/kustomization.yaml': yamlDocuments({ resources: ['service.yaml'] }),
      'deploy/broken/service.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n spec: {}\n',
      ...declaration('elsewhere', 'shop', { path: 'deploy/elsewhere', plain: {} }),
      'deploy/elsewhere/a.yaml': yamlDocuments(configMap('a', 'payments')),
      ...declaration('typo', 'shop', { path: 'deploy/elsewhere', plain: {}, prnue: true }),
    });
    const result = await janus(['validate', repo, ...POLICY, ...sourceFlags()]);
    expect(result.code).toBe(1);
    const lines = result.stderr.split('\n');
    expect(lines[0]).toMatch(/^deploy\/broken\/service.yaml:4: kustomize: .*MalformedYAMLError/);
    expect(lines.slice(1)).toEqual([
      'sources/elsewhere.yaml: v1 ConfigMap payments/a: namespace payments is not allowed for this repository (allowed: shop; set by --allowed-namespaces or JANUS_ALLOWED_NAMESPACES)',
      'sources/typo.yaml:10:3: spec.prnue: unknown field "prnue" in spec; allowed: path, kustomize, helm, plain, serviceAccountName, prune, timeout, lockTimeout, health, drift',
      '3 sources, 3 invalid',
      '',
    ]);
  });

  it('refuses a cluster-scoped kind --allowed-cluster-kinds does not list', async () => {
    await write({
      ...declaration('ns', 'shop', { path: 'deploy/ns', plain: {} }),
      'deploy/ns/ns.yaml': yamlDocuments({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } }),
    });
    const allowed = await janus([
      'validate',
      repo,
      ...POLICY,
      ...sourceFlags('--allowed-cluster-kinds', 'Namespace'),
    ]);
    expect(allowed).toMatchObject({ code: 0, stderr: '1 source, all valid\n' });
    const refused = await janus([
      'validate',
      repo,
      ...POLICY,
      ...sourceFlags('--allowed-cluster-kinds', 'apiextensions.k8s.io/CustomResourceDefinition'),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'sources/ns.yaml: v1 Namespace shop is cluster-scoped, and its kind is not allowed for this repository (allowed: apiextensions.k8s.io/CustomResourceDefinition;',
    );
  });
});

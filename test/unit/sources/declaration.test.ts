/**
 * Source declarations as written in Git: one Source a file, checked field by field against the
 * schema and the repository's policy, every problem located by file, line and column; the folder
 * read through the same DirectoryReader janus run and janus validate use.
 */
import { describe, expect, it } from 'vitest';
import { memoryReader } from '../../../src/gitops/directory-reader.ts';
import { repositoryPolicy } from '../../../src/gitops/policy.ts';
import {
  DECLARATION_LIMITS,
  parseDeclaration,
  readDeclarations,
  renderRequestOf,
} from '../../../src/sources/declaration.ts';
import { formatDiagnostic } from '../../../src/yaml/diagnostic.ts';

const policy = repositoryPolicy({
  defaultNamespace: 'shop',
  allowedNamespaces: 'shop,payments',
  allowedServiceAccounts: 'deployer',
});

const SHOP = `apiVersion: tx.janus.io/v1alpha1
kind: Source
metadata:
  name: shop
  namespace: shop
spec:
  path: deploy/overlays/prod
  kustomize: {}
  serviceAccountName: deployer
  prune: true
  health:
    timeout: 2m
`;

function problems(text: string, file = 'sources/shop.yaml'): string[] {
  const result = parseDeclaration(file, text, policy);
  return result.ok ? [] : result.rejected.diagnostics.map(formatDiagnostic);
}

describe('a source declaration', () => {
  it('is the Source its file holds, its namespace defaulted', () => {
    const result = parseDeclaration('sources/shop.yaml', SHOP.replace('  namespace: shop\n', ''), policy);
    expect(result).toEqual({
      ok: true,
      declaration: {
        file: 'sources/shop.yaml',
        name: 'shop',
        namespace: 'shop',
        spec: {
          path: 'deploy/overlays/prod',
          kustomize: {},
          serviceAccountName: 'deployer',
          prune: true,
          health: { timeout: '2m' },
        },
      },
    });
  });

  it('takes a chart with its values, and renders it with the defaults', () => {
    const text = `apiVersion: tx.janus.io/v1alpha1
kind: Source
metadata: {name: shop}
spec:
  path: charts/shop
  helm:
    valuesFiles: [values.yaml, values-prod.yaml]
    values: {replicaCount: 3}
    hooks: Include
  serviceAccountName: deployer
`;
    const result = parseDeclaration('sources/shop.yaml', text, policy);
    if (!result.ok) throw new Error(JSON.stringify(result.rejected.diagnostics));
    expect(renderRequestOf(result.declaration)).toEqual({
      path: 'charts/shop',
      namespace: 'shop',
      method: {
        kind: 'helm',
        releaseName: 'shop',
        valuesFiles: ['values.yaml', 'values-prod.yaml'],
        values: { replicaCount: 3 },
        includeCRDs: true,
        hooks: 'Include',
        kubeVersion: undefined,
        apiVersions: [],
      },
    });
  });

  it('names each problem by file, line and column', () => {
    const text = `apiVersion: tx.janus.io/v1alpha1
kind: Source
metadata:
  name: shop
spec:
  path: ../outside
  kustomize: {}
  plain: {}
  serviceAccountName: deployer
  prune: "yes"
  drift: {interval: 30s}
  colour: blue
`;
    expect(problems(text)).toEqual([
      'sources/shop.yaml:12:3: spec.colour: unknown field "colour" in spec; allowed: path, kustomize, helm, plain, serviceAccountName, prune, timeout, lockTimeout, health, drift',
      'sources/shop.yaml:6:9: spec.path: must be a path in the repository, from its root: not absolute, no ".." segment',
      'sources/shop.yaml:8:3: spec.plain: exactly one of kustomize, helm and plain says how the path is rendered; kustomize and plain are given',
      'sources/shop.yaml:10:10: spec.prune: must be true or false, found the string "yes"',
      'sources/shop.yaml:11:21: spec.drift.interval: must be 0s (never) or a duration from 1m to 24h, found the string "30s"',
    ]);
  });

  it('must say how to render, and name its file', () => {
    const text = SHOP.replace('  kustomize: {}\n', '').replace('name: shop', 'name: other');
    expect(problems(text)).toEqual([
      'sources/shop.yaml:4:9: metadata.name: must equal the file name "shop"',
      'sources/shop.yaml:7:3: spec.kustomize: exactly one of kustomize, helm and plain says how the path is rendered; none is given',
    ]);
  });

  it('is refused outside the policy: a namespace or a ServiceAccount the repository may not use', () => {
    expect(problems(SHOP.replace('namespace: shop', 'namespace: kube-system'))).toEqual([
      'sources/shop.yaml:5:14: metadata.namespace: namespace "kube-system" is a Kubernetes system namespace (kube-*): no repository may use it',
    ]);
    expect(problems(SHOP.replace('namespace: shop', 'namespace: other'))[0]).toMatch(
      /namespace "other" is not allowed for this repository \(allowed: shop, payments/,
    );
    expect(problems(SHOP.replace('serviceAccountName: deployer', 'serviceAccountName: admin'))[0]).toMatch(
      /sources\/shop.yaml:9:23: spec.serviceAccountName: ServiceAccount "shop\/admin" is not allowed for this repository/,
    );
  });

  it('has a name short enough for its transactions, <name>-<7 hex>', () => {
    const long = 'a'.repeat(56);
    expect(problems(SHOP.replace('name: shop', `name: ${long}`), `sources/${long}.yaml`)[0]).toMatch(
      /the file name "a{56}" is 56 characters; a source's name has at most 55/,
    );
  });

  it('is one document, a mapping, of bounded YAML', () => {
    expect(problems(`${SHOP}---\n${SHOP}`)).toEqual([
      'sources/shop.yaml (document 2): a source file holds a single YAML document: declare each source in a file of its own',
    ]);
    expect(problems('')).toEqual(['sources/shop.yaml: the file is empty; it must hold a Source']);
    expect(problems('a: &a [*a, *a]\n')[0]).toMatch(/sources\/shop.yaml:1:\d+: /);
  });
});

describe('the sources folder', () => {
  it('holds one source per *.yaml file; other files and folders are no sources', async () => {
    const reader = memoryReader({
      'sources/shop.yaml': SHOP,
      'sources/README.md': '# sources\n',
      'sources/old/shop.yaml': SHOP,
      'sources/broken.yaml': 'kind: [',
    });
    const read = await readDeclarations(reader, 'sources', policy);
    expect(read.sources.map((s) => s.file)).toEqual(['sources/shop.yaml']);
    expect(read.rejected.map((r) => [r.file, r.name, r.namespace])).toEqual([
      ['sources/broken.yaml', 'broken', 'shop'],
    ]);
    expect(read.problems).toEqual([]);
    expect((await readDeclarations(reader, 'nowhere', policy)).sources).toEqual([]);
  });

  it('is bounded: a file too large is refused before it is parsed, too many files refuse the folder', async () => {
    const big = `${SHOP}# ${'x'.repeat(DECLARATION_LIMITS.maxFileBytes)}\n`;
    const large = await readDeclarations(memoryReader({ 'sources/shop.yaml': big }), 'sources', policy);
    expect(large.rejected[0]?.diagnostics[0]?.message).toMatch(
      /a source declaration may have at most 262144/,
    );
    const files = Object.fromEntries(
      Array.from({ length: DECLARATION_LIMITS.maxSources + 1 }, (_, i) => [`sources/s${i}.yaml`, SHOP]),
    );
    const many = await readDeclarations(memoryReader(files), 'sources', policy);
    expect(many.sources).toEqual([]);
    expect(many.problems[0]?.message).toMatch(/129 source files; at most 128 are allowed/);
  });
});

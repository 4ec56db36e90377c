/** examples/ is what `janus demo` runs and what people copy: it must stay valid. */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import {
  diskReader,
  memoryReader,
  parseTransactionDirectory,
  repositoryPolicy,
  validateTree,
} from '../../../src/gitops/index.ts';
import { diskView } from '../../../src/render/checkout-view.ts';
import { checkKustomizations } from '../../../src/render/kustomize-precheck.ts';
import type { CheckoutView } from '../../../src/render/references.ts';
import { readDeclarations } from '../../../src/sources/declaration.ts';

const EXAMPLES = join(import.meta.dirname, '../../../examples');
// The policy janus demo runs with (src/cli/demo/story.ts).
const OPTIONS = {
  policy: repositoryPolicy({
    defaultNamespace: 'shop',
    allowedNamespaces: 'shop',
    allowedServiceAccounts: 'shop/deployer',
  }),
};

async function filesOf(dir: string, prefix: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of await readdir(dir)) out[`${prefix}/${name}`] = await readFile(join(dir, name), 'utf8');
  return out;
}

describe('examples/', () => {
  it('is a valid repository: every transaction directory passes janus validate', async () => {
    const result = await validateTree(EXAMPLES, OPTIONS);
    expect(result.diagnostics).toEqual([]);
    expect(result.directories).toEqual([
      { path: 'transactions/deploy-v2', ok: true, diagnostics: [] },
      { path: 'transactions/expose-checkout', ok: true, diagnostics: [] },
    ]);
  });

  it('has release-3/deploy-v3 valid too: a Deployment patch the health gate will roll back', async () => {
    const result = await validateTree(join(EXAMPLES, 'release-3'), OPTIONS);
    expect(result.directories).toEqual([{ path: 'transactions/deploy-v3', ok: true, diagnostics: [] }]);
    const dir = 'transactions/deploy-v3';
    const files = await filesOf(join(EXAMPLES, 'release-3', dir), dir);
    const parsed = await parseTransactionDirectory(memoryReader(files), dir, OPTIONS);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.diagnostics));
    expect(parsed.transaction.spec.health).toEqual({ targets: 'Auto', timeout: '2m' });
  });

  it('has release-4/deploy-v4 valid too: ready pods, a smoke test measured in a bake window', async () => {
    const result = await validateTree(join(EXAMPLES, 'release-4'), OPTIONS);
    expect(result.directories).toEqual([{ path: 'transactions/deploy-v4', ok: true, diagnostics: [] }]);
    const dir = 'transactions/deploy-v4';
    const files = await filesOf(join(EXAMPLES, 'release-4', dir), dir);
    const parsed = await parseTransactionDirectory(memoryReader(files), dir, OPTIONS);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.diagnostics));
    expect(parsed.transaction.spec.health).toMatchObject({
      stableFor: '1m',
      analysis: [
        { check: { name: 'checkout-smoke', http: { url: 'http://smoke-test.shop.svc:8080/checkout' } } },
      ],
    });
  });

  it('has deploy-v2 as in the spec: a ConfigMap patch, a Deployment patch and a Secret update, in shop', async () => {
    const files = await filesOf(join(EXAMPLES, 'transactions/deploy-v2'), 'transactions/deploy-v2');
    const parsed = await parseTransactionDirectory(memoryReader(files), 'transactions/deploy-v2', OPTIONS);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.diagnostics));
    expect(parsed.transaction.metadata.namespace).toBe('shop');
    expect(parsed.transaction.spec.serviceAccountName).toBe('deployer');
    expect(parsed.transaction.spec.changes.map((c) => [c.type, c.target.kind, c.target.name])).toEqual([
      ['Patch', 'ConfigMap', 'app-config'],
      ['Patch', 'Deployment', 'web'],
      ['Update', 'Secret', 'web-credentials'],
    ]);
  });

  it('has expose-checkout ask twice for one node port, so that it fails only at commit', async () => {
    const files = await filesOf(
      join(EXAMPLES, 'transactions/expose-checkout'),
      'transactions/expose-checkout',
    );
    const parsed = await parseTransactionDirectory(
      memoryReader(files),
      'transactions/expose-checkout',
      OPTIONS,
    );
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.diagnostics));
    const services = parsed.transaction.spec.changes.filter((c) => c.target.kind === 'Service');
    const ports = services.map(
      (c) => (c.content as { spec: { ports: { nodePort: number }[] } }).spec.ports[0]?.nodePort,
    );
    expect(services.map((c) => c.type)).toEqual(['Create', 'Create']);
    expect(new Set(ports).size).toBe(1);
  });

  it('has a follow-up commit that asks, with a reason, to roll deploy-v2 back', async () => {
    const files = {
      ...(await filesOf(join(EXAMPLES, 'transactions/deploy-v2'), 'transactions/deploy-v2')),
      ...(await filesOf(join(EXAMPLES, 'follow-up/transactions/deploy-v2'), 'transactions/deploy-v2')),
    };
    const parsed = await parseTransactionDirectory(memoryReader(files), 'transactions/deploy-v2', OPTIONS);
    expect(parsed.ok).toBe(true);
    expect(parsed.rollback?.reason).toMatch(/^Release 2 doubles checkout latency/);
  });

  it('sets up everything the transactions target, and the ServiceAccount may do what they need', async () => {
    const objects = [];
    for (const file of (await readdir(join(EXAMPLES, 'setup'))).sort()) {
      for (const doc of parseAllDocuments(await readFile(join(EXAMPLES, 'setup', file), 'utf8')))
        objects.push(doc.toJS());
    }
    const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    for (const needed of [
      'Namespace/shop',
      'ServiceAccount/deployer',
      'ConfigMap/app-config',
      'ConfigMap/storefront',
      'Secret/web-credentials',
      'Deployment/web',
    ]) {
      expect(names).toContain(needed);
    }
    const role = objects.find((o) => o.kind === 'Role');
    const allowed = (group: string, resource: string) =>
      role.rules.find(
        (r: { apiGroups: string[]; resources: string[] }) =>
          r.apiGroups.includes(group) && r.resources.includes(resource),
      )?.verbs;
    for (const [group, resource] of [
      ['', 'configmaps'],
      ['', 'secrets'],
      ['', 'services'],
      ['apps', 'deployments'],
    ]) {
      expect(allowed(group as string, resource as string)).toEqual([
        'get',
        'create',
        'update',
        'patch',
        'delete',
      ]);
    }
  });

  describe('sources/ (janus demo --sources)', () => {
    const SOURCES = join(EXAMPLES, 'sources');
    /** The demo's repository after commit n: examples/sources, then each later commit's files over it. */
    const commit = (n: 1 | 2 | 3): CheckoutView =>
      layered(
        [3, 2]
          .filter((k) => k <= n)
          .map((k) => join(EXAMPLES, `sources-release-${k}`))
          .concat(SOURCES),
      );
    const overlay = (n: 1 | 2 | 3) =>
      parse(commit(n).read('overlays/demo/kustomization.yaml') ?? '') as {
        images: { newTag: string }[];
        configMapGenerator: { name: string; literals: string[] }[];
        patches?: { path: string }[];
      };

    it("declares one Source, shop: the overlay, kustomize, prune on, the shop's health gate", async () => {
      const declarations = await readDeclarations(diskReader(SOURCES), 'sources', OPTIONS.policy);
      expect(declarations.rejected).toEqual([]);
      expect(declarations.problems).toEqual([]);
      expect(declarations.sources.map((d) => [d.file, d.name, d.namespace])).toEqual([
        ['sources/shop.yaml', 'shop', 'shop'],
      ]);
      expect(declarations.sources[0]?.spec).toMatchObject({
        path: 'overlays/demo',
        kustomize: {},
        serviceAccountName: 'deployer',
        prune: true,
        health: { targets: 'Auto', timeout: '2m' },
      });
    });

    it("passes the sandbox's pre-checks at each of its three commits (janus validate renders it: test/local/cli/examples-sources.test.ts)", () => {
      for (const n of [1, 2, 3] as const)
        expect(checkKustomizations(commit(n), 'overlays/demo'), `commit ${n}`).toBeUndefined();
    });

    it('changes, at commit 2, the image and the generated ConfigMap; at commit 3 both again, with pods that never become ready', () => {
      const [one, two, three] = ([1, 2, 3] as const).map(overlay);
      expect([one, two, three].map((o) => o?.images[0]?.newTag)).toEqual(['6.6.0', '6.7.0', '6.7.1']);
      const literals = [one, two, three].map((o) => o?.configMapGenerator[0]?.literals);
      expect(new Set(literals.map((l) => JSON.stringify(l))).size).toBe(3);
      expect([one, two].map((o) => o?.patches)).toEqual([undefined, undefined]);
      expect(three?.patches).toEqual([{ path: 'never-ready.patch.yaml' }]);
      const patch = parse(commit(3).read('overlays/demo/never-ready.patch.yaml') ?? '');
      expect(patch.spec.template.spec.containers[0].readinessProbe.httpGet.path).toBe('/never-ready');
    });
  });
});

/** One checkout of several folders, the first that has a path winning: a commit's files over the tree before it. */
function layered(roots: readonly string[]): CheckoutView {
  const views = roots.map(diskView);
  return {
    kind: (path) => views.map((v) => v.kind(path)).find((k) => k !== undefined),
    read: (path) => views.find((v) => v.kind(path) === 'file')?.read(path),
    list: (path) => [...new Set(views.flatMap((v) => v.list(path)))].sort(),
  };
}

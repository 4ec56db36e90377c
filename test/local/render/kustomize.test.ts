/**
 * Kustomize overlays rendered by the real kustomize (built from its pinned module), from a commit
 * of a real repository written out through Janus's object store: components, patches,
 * replacements and a configMapGenerator whose hash-suffixed name is stable from one render to
 * the next and follows the generator's content; objects in apply order; failures located.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { Renderer } from '../../../src/render/renderer.ts';
import type { RenderRequest, RenderResult } from '../../../src/render/types.ts';
import { renderAt, type SourceRepo, sourceRepository } from '../../support/git/source-repo.ts';
import { renderTools } from '../../support/servers/render-tools.ts';

const OVERLAY: RenderRequest = {
  path: 'apps/overlays/prod',
  method: { kind: 'kustomize' },
  namespace: 'shop',
};

const SHOP_FILES = {
  'apps/base/kustomization.yaml': 'resources:\n- deployment.yaml\n- service.yaml\n',
  'apps/base/deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 1
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: registry.example/web:v1
        envFrom: [{configMapRef: {name: settings}}]
        env: [{name: BACKEND, value: placeholder}]
`,
  'apps/base/service.yaml':
    'apiVersion: v1\nkind: Service\nmetadata:\n  name: web-backend\nspec:\n  selector: {app: web}\n  ports: [{port: 80}]\n',
  'apps/components/monitoring/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources:
- dashboards.yaml
patches:
- target: {kind: Deployment}
  patch: |
    - op: add
      path: /metadata/labels
      value: {monitored: "true"}
`,
  'apps/components/monitoring/dashboards.yaml':
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dashboards\ndata:\n  web.json: "{}"\n',
  'apps/overlays/prod/kustomization.yaml': `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: shop
resources:
- ../../base
- namespace.yaml
components:
- ../../components/monitoring
patches:
- path: replicas.yaml
configMapGenerator:
- name: settings
  files: [app.properties]
  literals: [MODE=prod]
replacements:
- path: backend.yaml
`,
  'apps/overlays/prod/namespace.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n',
  'apps/overlays/prod/replicas.yaml':
    'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  replicas: 3\n',
  'apps/overlays/prod/app.properties': 'color=blue\n',
  'apps/overlays/prod/backend.yaml': `source: {kind: Service, name: web-backend, fieldPath: metadata.name}
targets:
- select: {kind: Deployment, name: web}
  fieldPaths:
  - spec.template.spec.containers.[name=web].env.[name=BACKEND].value
`,
};

let repo: SourceRepo;
let renderer: Renderer;

beforeAll(async () => {
  repo = await sourceRepository();
  renderer = new Renderer({ tools: renderTools() });
});
afterAll(() => renderer.stop());

function objects(result: RenderResult): KubeObject[] {
  if (!result.ok) throw new Error(`render failed: ${JSON.stringify(result.failure)}`);
  return [...result.objects];
}

const named = (list: KubeObject[], kind: string, prefix: string) =>
  list.find((o) => o.kind === kind && o.metadata.name?.startsWith(prefix));

describe('a Kustomize source', () => {
  it('renders an overlay with components, patches, replacements and a configMapGenerator, in apply order', async () => {
    const commit = await repo.commit(SHOP_FILES);
    const result = await renderAt(renderer, repo, commit, OVERLAY);
    const list = objects(result);
    expect(list.map((o) => o.kind)).toEqual(['Namespace', 'ConfigMap', 'ConfigMap', 'Service', 'Deployment']);
    const deployment = named(list, 'Deployment', 'web') as KubeObject & {
      spec: {
        replicas: number;
        template: { spec: { containers: { env: unknown[]; envFrom: unknown[] }[] } };
      };
    };
    expect(deployment.metadata.namespace).toBe('shop');
    expect(deployment.spec.replicas).toBe(3); // the overlay's patch
    expect(deployment.metadata.labels).toEqual({ monitored: 'true' }); // the component's patch
    const container = deployment.spec.template.spec.containers[0];
    expect(container?.env).toEqual([{ name: 'BACKEND', value: 'web-backend' }]); // the replacement
    const settings = named(list, 'ConfigMap', 'settings-');
    expect(settings?.metadata.name).toMatch(/^settings-[a-z0-9]{10}$/);
    expect(settings?.data).toEqual({ 'app.properties': 'color=blue\n', MODE: 'prod' });
    // The generated name, hash and all, is what the Deployment refers to.
    expect(container?.envFrom).toEqual([{ configMapRef: { name: settings?.metadata.name } }]);
    expect(named(list, 'ConfigMap', 'dashboards')).toBeDefined();
    expect(result.ok && result.bytes).toBeGreaterThan(500);
  });

  it('gives the generated ConfigMap the same name at every render, and a new one when its content changes', async () => {
    const first = await repo.commit(SHOP_FILES);
    const name = async (commit: string) =>
      named(objects(await renderAt(renderer, repo, commit, OVERLAY)), 'ConfigMap', 'settings-')?.metadata
        .name;
    const before = await name(first);
    expect(await name(first)).toBe(before);
    const unrelated = await repo.commit({ ...SHOP_FILES, 'README.md': 'the shop\n' });
    expect(await name(unrelated)).toBe(before);
    const changed = await repo.commit({
      ...SHOP_FILES,
      'apps/overlays/prod/app.properties': 'color=green\n',
    });
    const after = await name(changed);
    expect(after).toMatch(/^settings-[a-z0-9]{10}$/);
    expect(after).not.toBe(before);
  });

  it("fails with kustomize's message, naming the file and line it points at", async () => {
    const commit = await repo.commit({
      ...SHOP_FILES,
      'apps/base/service.yaml': 'apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n spec: {}\n',
    });
    const result = await renderAt(renderer, repo, commit, OVERLAY);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.failure).toMatchObject({ tool: 'kustomize', file: 'apps/base/service.yaml', line: 4 });
    expect(result.failure.message).toContain('MalformedYAMLError');
    expect(result.failure.message).not.toContain('janus-render-'); // no path of the private checkout
  });

  it('fails naming the kustomization kustomize could not read', async () => {
    const commit = await repo.commit({
      ...SHOP_FILES,
      'apps/base/kustomization.yaml': 'resources:\n  - x: [\n',
    });
    const result = await renderAt(renderer, repo, commit, OVERLAY);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    // The pre-check reads it first, with the project's YAML parser.
    expect(result.failure).toMatchObject({ file: 'apps/base/kustomization.yaml', line: expect.any(Number) });
    expect(result.failure.message).toContain('YAML syntax error');
  });

  it('renders a plain folder of manifests, subfolders with recurse, in apply order', async () => {
    const commit = await repo.commit({
      'plain/b.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n---\n---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: plain\n',
      'plain/a.json': '{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a"}}',
      'plain/notes.txt': 'not a manifest',
      'plain/more/c.yml':
        'apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: c}\n',
    });
    const flat = objects(
      await renderAt(renderer, repo, commit, {
        path: 'plain',
        method: { kind: 'plain', recurse: false },
        namespace: 'shop',
      }),
    );
    expect(flat.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Namespace/plain',
      'ConfigMap/b',
      'Service/a',
    ]);
    const deep = objects(
      await renderAt(renderer, repo, commit, {
        path: 'plain/',
        method: { kind: 'plain', recurse: true },
        namespace: 'shop',
      }),
    );
    expect(deep.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Namespace/plain',
      'Secret/c',
      'ConfigMap/b',
      'Service/a',
    ]);
    const bad = await repo.commit({ 'plain/d.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n' });
    const failed = await renderAt(renderer, repo, bad, {
      path: 'plain',
      method: { kind: 'plain', recurse: false },
      namespace: 'shop',
    });
    expect(failed.ok).toBe(false);
    if (!failed.ok)
      expect(failed.failure).toMatchObject({
        tool: 'janus',
        file: 'plain/d.yaml',
        message: expect.stringContaining('a ConfigMap without metadata.name'),
      });
  });
});

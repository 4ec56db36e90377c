/**
 * Helm charts rendered by the real helm v4 (built from its pinned module) with `helm template`,
 * client side only: a vendored subchart, values files and inline values merged in order, CRDs
 * from crds/, hooks ignored or ordered as docs/sources.md says, `lookup` answering nothing, and a
 * failing template located by file and line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/kube/resources.ts';
import { Renderer } from '../../../src/render/renderer.ts';
import type { HelmRender, RenderRequest, RenderResult } from '../../../src/render/types.ts';
import { renderAt, type SourceRepo, sourceRepository } from '../../support/git/source-repo.ts';
import { renderTools } from '../../support/servers/render-tools.ts';

const HELM: HelmRender = {
  kind: 'helm',
  releaseName: 'shop',
  valuesFiles: ['values.yaml', 'values-prod.yaml'],
  values: {},
  includeCRDs: true,
  hooks: 'Ignore',
  apiVersions: [],
};
const request = (helm: Partial<HelmRender> = {}): RenderRequest => ({
  path: 'charts/shop',
  method: { ...HELM, ...helm },
  namespace: 'shop',
});

const hook = (
  kind: string,
  name: string,
  hooks: string,
  weight: number,
) => `apiVersion: ${kind === 'Job' ? 'batch/v1' : 'v1'}
kind: ${kind}
metadata:
  name: ${name}
  annotations:
    helm.sh/hook: ${hooks}
    helm.sh/hook-weight: "${weight}"
    helm.sh/hook-delete-policy: before-hook-creation
${kind === 'Job' ? 'spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: x, image: registry.example/x:v1}]\n' : kind === 'Pod' ? 'spec:\n  containers: [{name: x, image: registry.example/x:v1}]\n' : 'data: {}\n'}`;

const CHART = {
  'charts/shop/Chart.yaml': `apiVersion: v2
name: shop
version: 1.0.0
dependencies:
- name: cache
  version: 0.1.0
  repository: https://charts.example/stable
`,
  'charts/shop/values.yaml': 'replicaCount: 1\ncolor: red\ncache:\n  size: small\n',
  'charts/shop/values-prod.yaml': 'color: blue\ncache:\n  size: large\n',
  'charts/shop/crds/widgets.yaml': `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.shop.example
spec:
  group: shop.example
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`,
  'charts/shop/templates/deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  labels: {color: {{ .Values.color }}, namespace: {{ .Release.Namespace }}}
spec:
  replicas: {{ .Values.replicaCount }}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: registry.example/web:v1}]
`,
  'charts/shop/templates/lookup.yaml': `{{- $secret := lookup "v1" "Secret" "kube-system" "bootstrap-token" -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-lookup
data:
  secretFound: {{ if $secret }}"yes"{{ else }}"no"{{ end }}
  namespaces: "{{ len (lookup "v1" "Namespace" "" "") }}"
`,
  'charts/shop/templates/hooks.yaml': [
    hook('Job', 'migrate', 'pre-install,pre-upgrade', 5),
    hook('ConfigMap', 'pre-settings', 'pre-install', -1),
    hook('Job', 'smoke', 'post-install,post-upgrade', 0),
    hook('ConfigMap', 'cleanup', 'pre-delete', 0),
    hook('Pod', 'test-connection', 'test', 0),
  ].join('---\n'),
  'charts/shop/charts/cache/Chart.yaml': 'apiVersion: v2\nname: cache\nversion: 0.1.0\n',
  'charts/shop/charts/cache/values.yaml': 'size: tiny\n',
  'charts/shop/charts/cache/templates/cm.yaml':
    'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cache\ndata:\n  size: {{ .Values.size }}\n',
};

let repo: SourceRepo;
let renderer: Renderer;
let commit: string;

beforeAll(async () => {
  repo = await sourceRepository();
  renderer = new Renderer({ tools: renderTools() });
  commit = await repo.commit(CHART);
});
afterAll(() => renderer.stop());

function objects(result: RenderResult): KubeObject[] {
  if (!result.ok) throw new Error(`render failed: ${JSON.stringify(result.failure)}`);
  return [...result.objects];
}
const ids = (list: KubeObject[]) => list.map((o) => `${o.kind}/${o.metadata.name}`);
const find = (list: KubeObject[], id: string) => list.find((o) => `${o.kind}/${o.metadata.name}` === id);

describe('a Helm source', () => {
  it('renders a chart with a vendored subchart, values files and CRDs, hooks left out', async () => {
    const list = objects(await renderAt(renderer, repo, commit, request()));
    expect(ids(list)).toEqual([
      'CustomResourceDefinition/widgets.shop.example',
      'ConfigMap/shop-cache',
      'ConfigMap/shop-lookup',
      'Deployment/shop-web',
    ]);
    const deployment = find(list, 'Deployment/shop-web') as KubeObject & { spec: { replicas: number } };
    // values-prod.yaml after values.yaml; the release's namespace is the source's.
    expect(deployment.metadata.labels).toEqual({ color: 'blue', namespace: 'shop' });
    expect(deployment.spec.replicas).toBe(1);
    // The subchart takes the parent's values for it, the last file winning.
    expect(find(list, 'ConfigMap/shop-cache')?.data).toEqual({ size: 'large' });
  });

  it('merges inline values last, and leaves crds/ out when asked', async () => {
    const list = objects(
      await renderAt(
        renderer,
        repo,
        commit,
        request({ values: { replicaCount: 3, cache: { size: 'huge' } }, includeCRDs: false }),
      ),
    );
    expect(ids(list)).not.toContain('CustomResourceDefinition/widgets.shop.example');
    expect(
      (find(list, 'Deployment/shop-web') as KubeObject & { spec: { replicas: number } }).spec.replicas,
    ).toBe(3);
    expect(find(list, 'ConfigMap/shop-cache')?.data).toEqual({ size: 'huge' });
  });

  it('with hooks: Include, applies pre-install hooks first by weight and post-install hooks last; never tests or delete hooks', async () => {
    const list = objects(await renderAt(renderer, repo, commit, request({ hooks: 'Include' })));
    expect(ids(list)).toEqual([
      'ConfigMap/pre-settings',
      'Job/migrate',
      'CustomResourceDefinition/widgets.shop.example',
      'ConfigMap/shop-cache',
      'ConfigMap/shop-lookup',
      'Deployment/shop-web',
      'Job/smoke',
    ]);
  });

  it("answers the chart's lookup with nothing: no cluster is asked, none is known", async () => {
    const list = objects(await renderAt(renderer, repo, commit, request()));
    expect(find(list, 'ConfigMap/shop-lookup')?.data).toEqual({ secretFound: 'no', namespaces: '0' });
  });

  it('fails with the template file and line helm names', async () => {
    const failing = await repo.commit({
      ...CHART,
      'charts/shop/templates/broken.yaml':
        'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  {{ fail "the shop needs a database" }}\n',
    });
    const result = await renderAt(renderer, repo, failing, request());
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.failure).toMatchObject({
      tool: 'helm',
      file: 'charts/shop/templates/broken.yaml',
      line: 5,
      message: expect.stringContaining('the shop needs a database'),
    });
  });
});

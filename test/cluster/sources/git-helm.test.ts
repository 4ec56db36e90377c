/**
 * A Helm chart as a source, rendered by the real helm in `janus run` on a control plane with
 * workload controllers and kwok nodes: a vendored subchart, values files merged in order and
 * inline values last, a CRD from crds/ applied first (and never pruned), hooks ignored by default,
 * then, with hooks: Include, pre-install hooks applied before the rest and post-install hooks after
 * it, a test hook never.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useClients, useNamespace } from '../../support/cluster/kube.ts';
import { POD_IMAGES } from '../../support/cluster/pod-images.ts';
import { data, grantClusterRole, serviceAccount, waitForPhase } from '../../support/cluster/saga.ts';
import { availableWith } from '../../support/cluster/workloads.ts';
import { createTestRepo, recordedPhase, useGitServer, useJanus } from '../gitops/harness.ts';
import { attempted, declaration, SOURCE_DEPLOYER, sourceFlags, untilSource } from './harness.ts';

const clients = useClients();
const ns = useNamespace(clients, 'src-helm');
const git = useGitServer();
const janus = useJanus(clients);

const hook = (name: string, hooks: string, weight = 0) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  annotations:
    helm.sh/hook: ${hooks}
    helm.sh/hook-weight: "${weight}"
data: {hook: "${hooks}"}
`;

function chart(group: string): Record<string, string> {
  return {
    'charts/shop/Chart.yaml': `apiVersion: v2
name: shop
version: 1.0.0
dependencies:
- name: cache
  version: 0.1.0
  repository: https://charts.example/stable
`,
    'charts/shop/values.yaml': `replicaCount: 1\ngreeting: hello\nimage: ${POD_IMAGES.ready}\ncache:\n  size: small\n`,
    'charts/shop/values-prod.yaml': 'replicaCount: 2\ngreeting: prod\n',
    'charts/shop/crds/widgets.yaml': `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.${group}
spec:
  group: ${group}
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
`,
    'charts/shop/templates/deployment.yaml': `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
  labels: {app: web}
spec:
  replicas: {{ .Values.replicaCount }}
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: app, image: {{ .Values.image }}}]
`,
    'charts/shop/templates/greeting.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-greeting
data:
  greeting: {{ .Values.greeting }}
  namespace: {{ .Release.Namespace }}
`,
    'charts/shop/templates/pre.yaml': hook('migrate', 'pre-install,pre-upgrade', -1),
    'charts/shop/templates/post.yaml': hook('announce', 'post-install,post-upgrade'),
    'charts/shop/templates/test.yaml': hook('smoke-test', 'test'),
    'charts/shop/charts/cache/Chart.yaml': 'apiVersion: v2\nname: cache\nversion: 0.1.0\n',
    'charts/shop/charts/cache/values.yaml': 'size: tiny\n',
    'charts/shop/charts/cache/templates/config.yaml': `apiVersion: v1
kind: ConfigMap
metadata:
  name: cache-config
data: {size: {{ .Values.size }}}
`,
  };
}

describe('a Helm chart as a source', () => {
  it('applies the chart with its subchart, values and CRD; with hooks: Include, pre hooks first and post hooks last', {
    timeout: 600_000,
  }, async () => {
    const group = `${ns.name.slice(-6)}-${randomBytes(3).toString('hex')}.example`;
    await serviceAccount(clients.admin, ns.name, 'deployer', SOURCE_DEPLOYER);
    // The CRD is cluster-scoped: the deployer may write it (RBAC decides, --allowed-cluster-kinds unset).
    const crdRule = {
      apiGroups: ['apiextensions.k8s.io'],
      resources: ['customresourcedefinitions'],
      verbs: ['get', 'create', 'update', 'patch', 'delete'],
    };
    const revoke = await grantClusterRole(clients.admin, `crds-${ns.name}`, [crdRule], {
      kind: 'ServiceAccount',
      name: 'deployer',
      namespace: ns.name,
    });
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      name: `widgets.${group}`,
    };
    try {
      const repo = await createTestRepo(git.server);
      await janus.start({ repo: repo.url, namespace: ns.name, args: sourceFlags(), logLevel: 'info' });
      const helm = { valuesFiles: ['values.yaml', 'values-prod.yaml'], values: { cache: { size: 'large' } } };
      const first = await repo.push({
        ...declaration('shop', ns.name, { path: 'charts/shop', helm, prune: true }),
        ...chart(group),
      });
      const txn1 = await waitForPhase(
        clients.admin,
        ns.name,
        `shop-${first.slice(0, 7)}`,
        'Committed',
        240_000,
      );
      expect(txn1.spec.changes.map((c) => `${c.type} ${c.target.kind} ${c.target.name}`)).toEqual([
        `Apply CustomResourceDefinition widgets.${group}`,
        'Apply ConfigMap cache-config',
        'Apply ConfigMap shop-greeting',
        'Apply Deployment shop-web',
      ]);
      expect(txn1.spec.changes[0]?.target.namespace).toBeUndefined();
      expect(await data(clients.admin, ns.name, 'shop-greeting')).toEqual({
        greeting: 'prod',
        namespace: ns.name,
      });
      expect(await data(clients.admin, ns.name, 'cache-config')).toEqual({ size: 'large' });
      await availableWith(clients.admin, ns.name, 'shop-web', POD_IMAGES.ready);
      expect(await clients.admin.find(crd)).toBeDefined();
      await untilSource(clients.admin, ns.name, 'shop', attempted(first, 'Committed'));

      // Hooks included: the pre-install hook before everything, the post-install one last, no test hook.
      const second = await repo.push(
        declaration('shop', ns.name, {
          path: 'charts/shop',
          helm: { ...helm, hooks: 'Include' },
          prune: true,
        }),
      );
      const txn2 = await waitForPhase(
        clients.admin,
        ns.name,
        `shop-${second.slice(0, 7)}`,
        'Committed',
        240_000,
      );
      expect(txn2.spec.changes.map((c) => `${c.type} ${c.target.name}`)).toEqual([
        'Apply migrate',
        'Apply announce',
      ]);
      expect(await data(clients.admin, ns.name, 'smoke-test')).toBeUndefined();
      const source = await untilSource(clients.admin, ns.name, 'shop', attempted(second, 'Committed'));
      expect(source.status?.inventory?.map((e) => e.name)).toEqual([
        'migrate',
        `widgets.${group}`,
        'cache-config',
        'shop-greeting',
        'shop-web',
        'announce',
      ]);
      await recordedPhase(repo, ns.name, txn2.metadata.name, 'Committed');

      // The chart without its CRD: the CRD is never pruned, and the record says it is left.
      const files = chart(group);
      const third = await repo.push({
        'charts/shop/crds/widgets.yaml': null,
        'charts/shop/values-prod.yaml': files['charts/shop/values-prod.yaml'] ?? '',
      });
      const after = await untilSource(clients.admin, ns.name, 'shop', attempted(third, 'Committed'));
      expect(after.status?.inventory?.some((e) => e.kind === 'CustomResourceDefinition')).toBe(false);
      expect(await clients.admin.find(crd)).toBeDefined();
    } finally {
      await clients.admin.delete(crd).catch(() => undefined);
      await revoke();
    }
  });
});

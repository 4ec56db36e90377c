/**
 * Writes the fixtures of test/unit/changes/managed-fields.test.ts: objects server-side applied by
 * a source's manager on a real API server, some then changed by other managers, exactly as the
 * server returned them (managedFields included). Run against any cluster where you may create a
 * namespace:
 *
 *   node test/support/cluster/capture-managed-fields.ts <kubeconfig>
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KubeClient } from '../../../src/kube/client.ts';
import { Discovery, type KubeObject, Objects } from '../../../src/kube/resources.ts';

const OUT = fileURLToPath(new URL('../../unit/changes/fixtures/managed-fields.json', import.meta.url));
const NAMESPACE = `managed-fields-${Math.random().toString(16).slice(2, 8)}`;
export const SOURCE = `janus-source:${NAMESPACE}/shop`;

const labels = { 'app.kubernetes.io/name': 'web', 'app.kubernetes.io/part-of': 'shop' };

/** What the source applies: a chart's usual objects, with keyed lists, sets and atomic fields. */
const applied: KubeObject[] = [
  {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'web',
      namespace: NAMESPACE,
      labels,
      annotations: { 'tx.janus.io/applied-by': 'shop/shop-1111111@u#0', 'example.com/owner': 'shop' },
      finalizers: ['example.com/keep'],
    },
    spec: {
      replicas: 2,
      selector: { matchLabels: { 'app.kubernetes.io/name': 'web' } },
      template: {
        metadata: { labels },
        spec: {
          tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'shop', effect: 'NoSchedule' }],
          containers: [
            {
              name: 'app',
              image: 'registry.example.com/shop/web:1.0.0',
              args: ['--port=8080', '--log=json'],
              ports: [
                { name: 'http', containerPort: 8080, protocol: 'TCP' },
                { name: 'metrics', containerPort: 9090, protocol: 'TCP' },
              ],
              env: [
                { name: 'LOG_LEVEL', value: 'info' },
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              ],
              resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
            { name: 'sidecar', image: 'registry.example.com/shop/proxy:2.1.0' },
          ],
          volumes: [{ name: 'tmp', emptyDir: {} }],
        },
      },
    },
  },
  {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: NAMESPACE, labels },
    spec: {
      selector: { 'app.kubernetes.io/name': 'web' },
      ports: [
        { name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' },
        { name: 'metrics', port: 9090, protocol: 'TCP' },
      ],
    },
  },
  {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'web-config', namespace: NAMESPACE, labels },
    data: { 'application.yaml': 'server:\n  port: 8080\n', REGION: 'eu-west-1' },
  },
  {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'web', namespace: NAMESPACE, labels },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] }],
  },
];

/** Then others write: a person scales and labels it, another tool applies fields of its own. */
async function othersWrite(objects: Objects): Promise<void> {
  const ref = { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: NAMESPACE };
  const live = await objects.get(ref);
  const spec = live.spec as { replicas: number; template: { spec: { containers: { image: string }[] } } };
  spec.replicas = 3;
  live.metadata.labels = { ...live.metadata.labels, 'example.com/team': 'checkout' };
  await objects.replace(live, { fieldManager: 'kubectl-edit' });
  await objects.apply(
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: NAMESPACE, annotations: { 'example.com/scanned': 'yes' } },
      spec: {
        template: {
          spec: {
            containers: [{ name: 'app', image: 'registry.example.com/shop/web:1.0.1' }],
          },
        },
      },
    },
    { fieldManager: 'image-updater', force: true },
  );
}

const client = await KubeClient.load({ kubeconfig: process.argv[2] });
const objects = new Objects(client, new Discovery(client));
await objects.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
try {
  const fixtures: { name: string; applied: KubeObject; live: KubeObject }[] = [];
  for (const obj of applied) {
    const live = await objects.apply(obj, { fieldManager: SOURCE, force: true });
    fixtures.push({ name: `${obj.kind} applied by the source alone`, applied: obj, live });
  }
  await othersWrite(objects);
  const deployment = applied[0] as KubeObject;
  fixtures.push({
    name: 'Deployment changed by others after the source applied it',
    applied: deployment,
    live: await objects.get({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: NAMESPACE }),
  });
  writeFileSync(OUT, `${JSON.stringify({ manager: SOURCE, fixtures }, null, 2)}\n`);
} finally {
  // The finalizer would keep the Deployment, and so the namespace, forever.
  await objects.patch(
    { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: NAMESPACE },
    [{ op: 'remove', path: '/metadata/finalizers' }],
    'application/json-patch+json',
  );
  await objects.delete({ apiVersion: 'v1', kind: 'Namespace', name: NAMESPACE });
  await client.connection.close();
}

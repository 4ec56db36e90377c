/**
 * What a chart of many services renders, object after object: the usual mix (Deployment,
 * Service, ConfigMap, ServiceAccount, Role, RoleBinding, Ingress, HorizontalPodAutoscaler,
 * PodDisruptionBudget, ~650 bytes of JSON each), for measuring what a source's transaction of
 * that many objects costs the API server.
 */
import type { KubeObject } from '../../../src/kube/resources.ts';

export function chartObject(i: number, namespace: string): KubeObject {
  const app = `svc-${String(i).padStart(4, '0')}`;
  const labels = {
    'app.kubernetes.io/name': app,
    'app.kubernetes.io/instance': 'shop',
    'app.kubernetes.io/part-of': 'shop',
    'app.kubernetes.io/managed-by': 'Helm',
    'helm.sh/chart': 'shop-1.4.2',
    'app.kubernetes.io/version': '2.3.1',
  };
  const selector = { 'app.kubernetes.io/name': app, 'app.kubernetes.io/instance': 'shop' };
  const metadata = (name: string) => ({ name, namespace, labels });
  const of = (apiVersion: string, kind: string, name: string, body: Record<string, unknown>): KubeObject => ({
    apiVersion,
    kind,
    metadata: metadata(name),
    ...body,
  });
  switch (i % 9) {
    case 0:
      return of('apps/v1', 'Deployment', app, {
        spec: {
          replicas: 2,
          selector: { matchLabels: selector },
          template: {
            metadata: { labels, annotations: { 'checksum/config': 'a'.repeat(64) } },
            spec: {
              serviceAccountName: app,
              securityContext: { runAsNonRoot: true, runAsUser: 1000, fsGroup: 1000 },
              containers: [
                {
                  name: 'app',
                  image: `registry.example.com/shop/${app}:2.3.1`,
                  ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
                  env: [
                    { name: 'LOG_LEVEL', value: 'info' },
                    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                  ],
                  envFrom: [{ configMapRef: { name: `${app}-config` } }],
                  livenessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 10 },
                  readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 5 },
                  resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '512Mi' } },
                  securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true },
                },
              ],
            },
          },
        },
      });
    case 1:
      return of('v1', 'Service', app, {
        spec: { ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }], selector },
      });
    case 2:
      return of('v1', 'ConfigMap', `${app}-config`, {
        data: {
          'application.yaml': 'server:\n  port: 8080\nfeatures:\n  checkout: true\ncache:\n  ttl: 300\n',
          LOG_FORMAT: 'json',
          REGION: 'eu-west-1',
        },
      });
    case 3:
      return of('v1', 'ServiceAccount', app, {});
    case 4:
      return of('rbac.authorization.k8s.io/v1', 'Role', app, {
        rules: [{ apiGroups: [''], resources: ['configmaps', 'secrets'], verbs: ['get', 'list', 'watch'] }],
      });
    case 5:
      return of('rbac.authorization.k8s.io/v1', 'RoleBinding', app, {
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: app },
        subjects: [{ kind: 'ServiceAccount', name: app, namespace }],
      });
    case 6:
      return of('networking.k8s.io/v1', 'Ingress', app, {
        spec: {
          ingressClassName: 'nginx',
          tls: [{ hosts: [`${app}.shop.example.com`], secretName: `${app}-tls` }],
          rules: [
            {
              host: `${app}.shop.example.com`,
              http: {
                paths: [
                  {
                    path: '/',
                    pathType: 'Prefix',
                    backend: { service: { name: app, port: { name: 'http' } } },
                  },
                ],
              },
            },
          ],
        },
      });
    case 7:
      return of('autoscaling/v2', 'HorizontalPodAutoscaler', app, {
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: app },
          minReplicas: 2,
          maxReplicas: 10,
          metrics: [
            {
              type: 'Resource',
              resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } },
            },
          ],
        },
      });
    default:
      return of('policy/v1', 'PodDisruptionBudget', app, {
        spec: { minAvailable: 1, selector: { matchLabels: selector } },
      });
  }
}

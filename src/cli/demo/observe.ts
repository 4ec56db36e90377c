/** What the demo shows of the example shop's state after each transaction. */
import type { KubeObject, Objects } from '../../kube/resources.ts';

/** " (2/2 replicas ready)": what the Deployment's controller reports. */
function replicas(web: (KubeObject & Record<string, unknown>) | undefined): string {
  const status = web?.status as { readyReplicas?: number; replicas?: number } | undefined;
  const spec = web?.spec as { replicas?: number } | undefined;
  return status ? ` (${status.readyReplicas ?? 0}/${spec?.replicas ?? 1} replicas ready)` : '';
}

/** A few plain-language facts about the example shop, to see what each transaction did. */
export async function describeShop(objects: Objects): Promise<string[]> {
  const get = (apiVersion: string, kind: string, name: string) =>
    objects.find<KubeObject & Record<string, unknown>>({ apiVersion, kind, name, namespace: 'shop' });
  const [web, config, storefront, checkout, admin] = await Promise.all([
    get('apps/v1', 'Deployment', 'web'),
    get('v1', 'ConfigMap', 'app-config'),
    get('v1', 'ConfigMap', 'storefront'),
    get('v1', 'Service', 'checkout'),
    get('v1', 'Service', 'checkout-admin'),
  ]);
  const image = (web?.spec as { template?: { spec?: { containers?: { image?: string }[] } } } | undefined)
    ?.template?.spec?.containers?.[0]?.image;
  const data = (o: KubeObject | undefined) => (o?.data ?? {}) as Record<string, string>;
  const exists = (o: KubeObject | undefined) => (o ? 'exists' : 'does not exist');
  return [
    `Deployment web runs image ${image ?? '(none)'}${replicas(web)}`,
    `ConfigMap app-config: FEATURE_CHECKOUT_V2=${data(config).FEATURE_CHECKOUT_V2}, API_TIMEOUT=${data(config).API_TIMEOUT}`,
    `ConfigMap storefront: checkout_url=${data(storefront).checkout_url}`,
    `Service checkout ${exists(checkout)}; Service checkout-admin ${exists(admin)}`,
  ];
}

/**
 * The shop as the sources story shows it: the Deployment, the generated ConfigMaps it may read
 * (web-config-<hash>, with their data), the Service.
 */
export async function describeOverlayShop(objects: Objects): Promise<string[]> {
  const [web, service, configMaps] = await Promise.all([
    objects.find<KubeObject & Record<string, unknown>>({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: 'web',
      namespace: 'shop',
    }),
    objects.find({ apiVersion: 'v1', kind: 'Service', name: 'web', namespace: 'shop' }),
    objects.list('v1', 'ConfigMap', 'shop'),
  ]);
  const container = (
    web?.spec as
      | {
          template?: {
            spec?: { containers?: { image?: string; envFrom?: { configMapRef?: { name?: string } }[] }[] };
          };
        }
      | undefined
  )?.template?.spec?.containers?.[0];
  const reads = container?.envFrom?.find((e) => e.configMapRef)?.configMapRef?.name;
  const generated = configMaps.items
    .filter((cm) => cm.metadata.name.startsWith('web-config-'))
    .map((cm) => {
      const data = Object.entries((cm.data ?? {}) as Record<string, string>)
        .map(([key, value]) => `${key}=${value}`)
        .join(', ');
      return `ConfigMap ${cm.metadata.name}: ${data}`;
    });
  return [
    web
      ? `Deployment web runs image ${container?.image ?? '(none)'}${replicas(web)}, reading ConfigMap ${reads ?? '(none)'}`
      : 'Deployment web does not exist',
    ...(generated.length > 0 ? generated : ['no ConfigMap web-config-*']),
    `Service web ${service ? 'exists' : 'does not exist'}`,
  ];
}

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

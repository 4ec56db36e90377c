/**
 * The windowed-rollout fixture the bake window's tests share: a namespace whose Deployment "web"
 * runs the good image on kwok, a deployer ServiceAccount that may roll it, a change to a new
 * image, the controller as its own process, and the Event that explains how a transaction ended.
 */
import type { Change } from '../../../src/api/v1alpha1/index.ts';
import { type ControllerProcessOptions, withController } from '../processes/controller-process.ts';
import type { TestClients } from './kube.ts';
import { POD_IMAGES } from './pod-images.ts';
import { testNamespace } from './saga.ts';
import { availableWith, deployment } from './workloads.ts';

const DEPLOYER = [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] }];

/** A Deployment "web" running the good image, both replicas available; its namespace. */
export async function webShop(clients: TestClients, prefix: string): Promise<string> {
  const ns = await testNamespace(clients.admin, prefix, { deployer: DEPLOYER });
  await clients.admin.create(deployment(ns, 'web', POD_IMAGES.ready));
  await availableWith(clients.admin, ns, 'web', POD_IMAGES.ready);
  return ns;
}

/** Rolls "web" to `image`. */
export const newImage = (image: string): Change => ({
  target: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
  type: 'Patch',
  content: { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } },
});

/** Runs `body` with the controller running for `ns` (with the analysis settings of `settings`). */
export function withWebController<T>(
  clients: TestClients,
  ns: string,
  body: () => Promise<T>,
  settings: Pick<ControllerProcessOptions, 'analysisAllowedAddresses' | 'analysisTemplateNamespaces'> = {},
): Promise<T> {
  return withController(
    { kubeconfig: clients.kubeconfigs.controller, namespace: ns, logLevel: 'info', ...settings },
    body,
  );
}

/** The message of the first Event of `reason` in `ns`, if there is one. */
export async function eventMessage(
  clients: TestClients,
  ns: string,
  reason: string,
): Promise<string | undefined> {
  const events = await clients.admin.list('v1', 'Event', ns);
  const event = events.items.find((e) => (e as { reason?: string }).reason === reason) as
    | { message?: string }
    | undefined;
  return event?.message;
}

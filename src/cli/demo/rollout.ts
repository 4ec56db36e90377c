/**
 * The web Deployment's rollout as the demo tells it: which pods run which image, and whether
 * they are ready. The demo shows it once release 3 is being verified; the Deployment's template
 * has changed by then, but its controllers create the new pod a moment later, so the narration
 * waits until a pod runs the template's image before it describes the pods (a clean-clone CI run
 * showed "2 ready" alone when it sampled at once).
 */
import type { KubeObject, Objects } from '../../kube/resources.ts';

export interface PodView {
  metadata: KubeObject['metadata'];
  spec?: { containers?: { image?: string }[] };
  status?: { conditions?: { type: string; status: string }[] };
}

interface DeploymentView {
  spec?: { template?: { spec?: { containers?: { image?: string }[] } } };
}

const POLL_MS = 250;

/** The pods that count: those not being deleted (an old pod on its way out is not serving). */
const live = (pods: readonly PodView[]) => pods.filter((pod) => !pod.metadata.deletionTimestamp);

/** "web pods: 2 ready, image podinfo:6.7.0; 1 not ready, image podinfo:6.7.1", during a rollout. */
export function rolloutLine(pods: readonly PodView[]): string {
  const groups = new Map<string, number>();
  for (const pod of live(pods)) {
    const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    const image = pod.spec?.containers?.[0]?.image?.split('/').pop() ?? '?';
    const key = `${ready ? 'ready' : 'not ready'}, image ${image}`;
    groups.set(key, (groups.get(key) ?? 0) + 1);
  }
  const parts = [...groups.entries()]
    .sort()
    .reverse()
    .map(([key, n]) => `${n} ${key}`);
  return `web pods: ${parts.join('; ') || 'none'}`;
}

/** True once some live pod runs `image`: the rollout to it has begun, and the line can show it. */
export const runsImage = (pods: readonly PodView[], image: string | undefined): boolean =>
  image !== undefined && live(pods).some((pod) => pod.spec?.containers?.[0]?.image === image);

/**
 * Describes the web pods once a pod runs the Deployment's current image (the one it rolls out
 * to). `signal` bounds the wait (Ctrl-C, the main job exiting, the time limit).
 */
export async function describeRollout(objects: Objects, signal: AbortSignal): Promise<string> {
  for (;;) {
    const [web, list] = await Promise.all([
      objects.find<KubeObject & DeploymentView>({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'web',
        namespace: 'shop',
      }),
      objects.list('v1', 'Pod', 'shop', { labelSelector: 'app=web' }),
    ]);
    const pods = list.items as PodView[];
    if (runsImage(pods, web?.spec?.template?.spec?.containers?.[0]?.image)) return rolloutLine(pods);
    signal.throwIfAborted();
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

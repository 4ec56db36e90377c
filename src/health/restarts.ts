/**
 * Restarts of a target's current-revision containers: the sign of a pod that crashes and comes
 * back between two looks, which its Ready condition and its workload's counters may never show.
 * The bake window compares them with what they were when it opened. Pure.
 */
import type { KubeObject } from '../kube/resources.ts';
import { splitApiVersion } from '../kube/resources.ts';
import { arrayAt, numberAt, type RelatedObjects, stringAt } from './fields.ts';
import { controlledBy } from './pods.ts';
import { newDaemonSetPods, newDeploymentPods, newStatefulSetPods } from './workloads.ts';

export interface Restarts {
  /** The sum of restartCount over the current revision's containers (init containers too). */
  total: number;
  /** The container that restarted most, to name in a message. */
  worst?: { pod: string; container: string; count: number; waiting?: string };
}

type PodsOf = (obj: KubeObject, related: RelatedObjects) => KubeObject[];

/** Kinds whose pods are theirs to watch, keyed like the health rules ("group/Kind"). */
const CURRENT_PODS: ReadonlyMap<string, PodsOf> = new Map<string, PodsOf>([
  ['apps/Deployment', newDeploymentPods],
  ['apps/StatefulSet', newStatefulSetPods],
  ['apps/DaemonSet', newDaemonSetPods],
  ['apps/ReplicaSet', (obj, related) => controlledBy(obj, related.pods ?? [])],
  ['/Pod', (obj) => [obj]],
]);

/** The target's current-revision restarts; undefined for a kind without pods of its own. */
export function restartsOf(obj: KubeObject, related: RelatedObjects = {}): Restarts | undefined {
  const podsOf = CURRENT_PODS.get(`${splitApiVersion(obj.apiVersion).group}/${obj.kind}`);
  if (!podsOf) return undefined;
  let total = 0;
  let worst: Restarts['worst'];
  for (const pod of podsOf(obj, related)) {
    const statuses = [
      ...arrayAt(pod, 'status', 'initContainerStatuses'),
      ...arrayAt(pod, 'status', 'containerStatuses'),
    ];
    for (const s of statuses) {
      const count = numberAt(s, 'restartCount') ?? 0;
      total += count;
      if (count > 0 && count > (worst?.count ?? 0)) {
        const { namespace, name } = pod.metadata;
        const waiting = stringAt(s, 'state', 'waiting', 'reason');
        worst = {
          pod: `${namespace ? `${namespace}/` : ''}${name}`,
          container: stringAt(s, 'name') ?? '(unnamed)',
          count,
          ...(waiting && { waiting }),
        };
      }
    }
  }
  return { total, ...(worst && { worst }) };
}

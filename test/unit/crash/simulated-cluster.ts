/**
 * What the cluster does that the saga observes, played over the in-memory API (FakeApi) by a clock
 * the test moves: a Deployment controller (ReplicaSets, a rolling update with maxSurge 1 and
 * maxUnavailable 0, the revision annotation, its status), a StatefulSet controller (OrderedReady
 * rolling update from the highest ordinal, waiting for every pod to be Ready; a deleted pod
 * recreated at the update revision), and pods that behave by their image as the test control
 * plane's kwok stages make them (test/support/cluster/pod-images.ts): Ready after POD_START_MS;
 * crash-looping (restartCount 3); or Ready, then crash-looping FLAPPING_AFTER_MS later.
 *
 * Level-triggered, like the real controllers: `sync(now)` brings every workload up to date with
 * its spec and every pod with its age, writing only what changed (each write a new
 * resourceVersion the saga sees). Pods change by themselves only at known instants
 * (`nextChangeAt`), so the test can jump the clock from one to the next.
 */
import { createHash } from 'node:crypto';
import { selectorOf, selects } from '../../../src/kube/label-selector.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';
import type { FakeApi } from '../../support/fake-api.ts';

/** From a pod's creation to its containers running (and Ready, for a healthy image). */
export const POD_START_MS = 1_000;
/** How long a flapping pod stays Ready before it crash-loops (kwok's pod-flapping-crash). */
export const FLAPPING_AFTER_MS = 10_000;

const MANAGER = 'kube-controller-manager';
const REVISION = 'deployment.kubernetes.io/revision';
const MAX_SURGE = 1;

interface Container {
  name: string;
  image: string;
}

interface Workload extends KubeObject {
  spec: {
    replicas?: number;
    selector: { matchLabels?: Record<string, string> };
    template: { metadata?: { labels?: Record<string, string> }; spec: { containers: Container[] } };
  };
  status?: Record<string, unknown>;
}

interface Pod extends KubeObject {
  spec: { containers: Container[] };
  status?: Record<string, unknown>;
}

type Behaviour = 'ready' | 'crash-loop' | 'flapping';

function behaviourOf(pod: Pod): Behaviour {
  const images = pod.spec.containers.map((c) => c.image);
  if (images.some((i) => i.endsWith(':crash-loop'))) return 'crash-loop';
  if (images.some((i) => i.endsWith(':flapping'))) return 'flapping';
  return 'ready';
}

const createdAt = (obj: KubeObject): number => Date.parse(obj.metadata.creationTimestamp ?? '');

/** The pod's status at `now`, as kwok's stages would have written it by then. */
function podStatus(pod: Pod, now: number): Record<string, unknown> {
  const age = now - createdAt(pod);
  if (age < POD_START_MS) return { phase: 'Pending' };
  const behaviour = behaviourOf(pod);
  const crashing =
    behaviour === 'crash-loop' || (behaviour === 'flapping' && age >= POD_START_MS + FLAPPING_AFTER_MS);
  const ready = !crashing;
  return {
    phase: 'Running',
    conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
    containerStatuses: pod.spec.containers.map((c) => ({
      name: c.name,
      image: c.image,
      ready,
      restartCount: crashing ? 3 : 0,
      state: crashing
        ? {
            waiting: {
              reason: 'CrashLoopBackOff',
              message: `back-off 40s restarting failed container=${c.name}`,
            },
          }
        : { running: {} },
    })),
  };
}

/** When the pod's status next changes by itself, if it ever does. */
function podChangesAt(pod: Pod, now: number): number | undefined {
  const born = createdAt(pod);
  const moments = [born + POD_START_MS];
  if (behaviourOf(pod) === 'flapping') moments.push(born + POD_START_MS + FLAPPING_AFTER_MS);
  return moments.find((t) => t > now);
}

const isReady = (pod: Pod): boolean =>
  (pod.status?.conditions as { type: string; status: string }[] | undefined)?.some(
    (c) => c.type === 'Ready' && c.status === 'True',
  ) ?? false;

const hashOf = (template: unknown): string =>
  createHash('sha256').update(JSON.stringify(template)).digest('hex').slice(0, 10);

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

export class SimulatedCluster {
  readonly #api: FakeApi;
  readonly #namespace: string;
  #pods = 0;

  constructor(api: FakeApi, namespace: string) {
    this.#api = api;
    this.#namespace = namespace;
  }

  /** Brings every workload and pod up to date at `now`; true when anything was written. */
  sync(now: number): boolean {
    let changed = false;
    // Each controller acts on what the others just wrote, as they would within moments.
    for (let pass = 0; pass < 100; pass++) {
      const wrote =
        this.#syncPods(now) ||
        this.#list<Workload>('Deployment').some((d) => this.#syncDeployment(d, now)) ||
        this.#list<Workload>('StatefulSet').some((s) => this.#syncStatefulSet(s, now));
      if (!wrote) return changed;
      changed = true;
    }
    throw new Error('the simulated cluster does not settle');
  }

  /** The next instant a pod changes by itself, if any will. */
  nextChangeAt(now: number): number | undefined {
    const moments = this.#list<Pod>('Pod')
      .map((p) => podChangesAt(p, now))
      .filter((t): t is number => t !== undefined);
    return moments.length > 0 ? Math.min(...moments) : undefined;
  }

  #list<T extends KubeObject>(kind: string): T[] {
    return this.#api
      .list<T>(kind, this.#namespace)
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  }

  #syncPods(now: number): boolean {
    let wrote = false;
    for (const pod of this.#list<Pod>('Pod')) {
      const status = podStatus(pod, now);
      if (same({ observedGeneration: pod.metadata.generation, ...status }, pod.status)) continue;
      this.#api.setStatus(refOf(pod), status);
      wrote = true;
    }
    return wrote;
  }

  #podsOf(owner: KubeObject): Pod[] {
    return this.#list<Pod>('Pod').filter(
      (p) => p.metadata.ownerReferences?.find((r) => r.controller)?.uid === owner.metadata.uid,
    );
  }

  #createPod(
    owner: KubeObject,
    name: string,
    template: Workload['spec']['template'],
    labels: Record<string, string>,
    now: number,
  ) {
    this.#api.put<Pod>(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name,
          namespace: this.#namespace,
          labels: { ...template.metadata?.labels, ...labels },
          creationTimestamp: new Date(now).toISOString(),
          ownerReferences: [controllerRef(owner)],
        },
        spec: structuredClone(template.spec),
      },
      MANAGER,
    );
  }

  /** One step of the Deployment controller; true when it wrote anything. */
  #syncDeployment(deployment: Workload, now: number): boolean {
    const hash = hashOf(deployment.spec.template);
    const owned = this.#list<Workload>('ReplicaSet').filter(
      (rs) => rs.metadata.ownerReferences?.find((r) => r.controller)?.uid === deployment.metadata.uid,
    );
    const revisions = owned.map((rs) => Number(rs.metadata.annotations?.[REVISION] ?? 0));
    let current = owned.find((rs) => rs.metadata.labels?.['pod-template-hash'] === hash);
    const newest = Math.max(0, ...revisions);
    // A new template gets a new ReplicaSet; going back to an old one (a rollback) makes it the newest.
    if (!current || Number(current.metadata.annotations?.[REVISION]) !== newest) {
      const name = `${deployment.metadata.name}-${hash}`;
      current = this.#api.put<Workload>(
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          metadata: {
            ...(current?.metadata ?? {
              name,
              namespace: this.#namespace,
              labels: { ...deployment.spec.template.metadata?.labels, 'pod-template-hash': hash },
              ownerReferences: [controllerRef(deployment)],
              creationTimestamp: new Date(now).toISOString(),
            }),
            annotations: { [REVISION]: String(newest + 1) },
          },
          spec: { ...deployment.spec, template: structuredClone(deployment.spec.template) },
        },
        MANAGER,
      );
      return true;
    }
    const revision = current.metadata.annotations?.[REVISION] ?? '';
    if (deployment.metadata.annotations?.[REVISION] !== revision) {
      this.#api.put(
        {
          ...deployment,
          metadata: {
            ...deployment.metadata,
            annotations: { ...deployment.metadata.annotations, [REVISION]: revision },
          },
        },
        MANAGER,
      );
      return true;
    }
    const replicas = deployment.spec.replicas ?? 1;
    const fresh = this.#podsOf(current);
    const old = owned.filter((rs) => rs !== current).flatMap((rs) => this.#podsOf(rs));
    const available = [...fresh, ...old].filter(isReady).length;
    // Scale down the old: the unavailable at once, the others while enough stay available.
    const notReady = old.find((p) => !isReady(p));
    const surplus = old.find(isReady);
    const victim = notReady ?? (surplus && available - 1 >= replicas ? surplus : undefined);
    if (victim) {
      this.#api.remove(refOf(victim));
      return true;
    }
    if (fresh.length < replicas && fresh.length + old.length < replicas + MAX_SURGE) {
      const name = `${current.metadata.name}-${++this.#pods}`;
      this.#createPod(current, name, current.spec.template, { 'pod-template-hash': hash }, now);
      return true;
    }
    const complete = fresh.length === replicas && fresh.every(isReady) && old.length === 0;
    const status = {
      observedGeneration: deployment.metadata.generation,
      replicas: fresh.length + old.length,
      updatedReplicas: fresh.length,
      readyReplicas: available,
      availableReplicas: available,
      conditions: [
        { type: 'Available', status: available >= replicas ? 'True' : 'False' },
        {
          type: 'Progressing',
          status: 'True',
          reason: complete ? 'NewReplicaSetAvailable' : 'ReplicaSetUpdated',
        },
      ],
    };
    return this.#writeStatus(deployment, status);
  }

  /** One step of the StatefulSet controller (OrderedReady, RollingUpdate); true when it wrote. */
  #syncStatefulSet(sts: Workload, now: number): boolean {
    const name = sts.metadata.name;
    const updateRevision = `${name}-${hashOf(sts.spec.template)}`;
    const status = sts.status ?? {};
    const replicas = sts.spec.replicas ?? 1;
    const pods = this.#podsOf(sts);
    const revisionOf = (p: Pod) => p.metadata.labels?.['controller-revision-hash'];
    const byOrdinal = Array.from({ length: replicas }, (_, i) =>
      pods.find((p) => p.metadata.name === `${name}-${i}`),
    );
    if (this.#stepStatefulSet(sts, byOrdinal, pods, updateRevision, now)) return true;
    const settled =
      pods.length === replicas && pods.every((p) => isReady(p) && revisionOf(p) === updateRevision);
    const currentRevision = settled || !status.currentRevision ? updateRevision : status.currentRevision;
    return this.#writeStatus(sts, {
      observedGeneration: sts.metadata.generation,
      replicas: pods.length,
      readyReplicas: pods.filter(isReady).length,
      availableReplicas: pods.filter(isReady).length,
      currentReplicas: pods.filter((p) => revisionOf(p) === currentRevision).length,
      updatedReplicas: pods.filter((p) => revisionOf(p) === updateRevision).length,
      currentRevision,
      updateRevision,
    });
  }

  /** Creates a missing pod, or replaces the next one of another revision; true when it did. */
  #stepStatefulSet(
    sts: Workload,
    byOrdinal: (Pod | undefined)[],
    pods: Pod[],
    updateRevision: string,
    now: number,
  ): boolean {
    const name = sts.metadata.name;
    // A missing pod is created at the update revision; OrderedReady waits for it to be Ready.
    const missing = byOrdinal.indexOf(undefined);
    if (missing >= 0 && byOrdinal.slice(0, missing).every((p) => p && isReady(p))) {
      const labels = {
        'controller-revision-hash': updateRevision,
        'statefulset.kubernetes.io/pod-name': `${name}-${missing}`,
      };
      this.#createPod(sts, `${name}-${missing}`, sts.spec.template, labels, now);
      return true;
    }
    if (missing >= 0 || pods.some((p) => !isReady(p))) return false;
    // Rolling update: the highest ordinal not at the update revision is deleted (and recreated).
    const stale = [...byOrdinal]
      .reverse()
      .find((p) => p && p.metadata.labels?.['controller-revision-hash'] !== updateRevision);
    if (!stale) return false;
    this.#api.remove(refOf(stale));
    return true;
  }

  #writeStatus(obj: Workload, status: Record<string, unknown>): boolean {
    const { observedGeneration: _o, ...rest } = status;
    const { observedGeneration: _p, ...previous } = obj.status ?? {};
    if (obj.status?.observedGeneration === obj.metadata.generation && same(rest, previous)) return false;
    this.#api.setStatus(refOf(obj), rest);
    return true;
  }
}

function refOf(obj: KubeObject) {
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: obj.metadata.name,
    namespace: obj.metadata.namespace,
  };
}

function controllerRef(owner: KubeObject) {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid ?? '',
    controller: true,
  };
}

/** The pods and ReplicaSets a workload's health rule looks through, from what is stored. */
export function relatedOf(api: FakeApi, workload: KubeObject) {
  const selector = selectorOf(workload);
  if (!selector) return {};
  const namespace = workload.metadata.namespace;
  const selected = (kind: string) =>
    api.list(kind, namespace).filter((o) => selects(selector, o.metadata.labels));
  return { pods: selected('Pod'), replicaSets: selected('ReplicaSet') };
}

/**
 * What the health gate sees of its targets, from list+watch caches shared by every transaction:
 * one informer per watched target (by name) and, for a workload, one for its pods (by its
 * selector) and one for a Deployment's ReplicaSets. They are opened while a transaction waits on
 * them and closed when none does; any change wakes the transactions waiting on it. So the gate
 * costs a LIST and a WATCH per object it follows, not a poll loop per transaction.
 *
 * The watches run as the controller (janus-tenant grants it get/list/watch on workloads and
 * pods). Kinds outside those, or a namespace that does not grant them, are read by GET as the
 * transaction's ServiceAccount instead, and the gate looks again every POLL_MS.
 */

import type { RelatedObjects } from '../health/index.ts';
import type { KubeClient } from '../kube/client.ts';
import {
  collectionPath,
  type Discovery,
  type KubeObject,
  type ObjectRef,
  type Objects,
  type ResourceMapping,
} from '../kube/resources.ts';
import type { Logger } from '../log/index.ts';
import { dropManagedFields, Informer } from '../runtime/informer.ts';

/** How often the gate reads again a target no watch tells it about. */
export const POLL_MS = 5_000;
/** How long a new watch may take to list before its target is read by GET instead. */
const SYNC_TIMEOUT_MS = 10_000;

/** Kinds the controller may watch (see manifests/rbac/tenant-cluster-role.yaml), by "group/Kind". */
const WATCHED_KINDS: ReadonlySet<string> = new Set([
  'apps/Deployment',
  'apps/StatefulSet',
  'apps/DaemonSet',
  'apps/ReplicaSet',
  'batch/Job',
  '/Pod',
  '/PersistentVolumeClaim',
  '/Service',
]);
/** Workloads whose pods a health rule looks through. */
const WITH_PODS: ReadonlySet<string> = new Set([
  'apps/Deployment',
  'apps/StatefulSet',
  'apps/DaemonSet',
  'apps/ReplicaSet',
  'batch/Job',
]);
const PODS: ResourceMapping = { group: '', version: 'v1', kind: 'Pod', resource: 'pods', namespaced: true };
const REPLICA_SETS: ResourceMapping = {
  group: 'apps',
  version: 'v1',
  kind: 'ReplicaSet',
  resource: 'replicasets',
  namespaced: true,
};

export interface Observation {
  /** Undefined when the target does not exist. */
  object: KubeObject | undefined;
  related: RelatedObjects;
  /** Read by GET: no watch will say when it changes, so look again after POLL_MS. */
  polled: boolean;
}

/** The health gate's view of the cluster (an interface so the saga can run without watches). */
export interface HealthReader {
  /** Reads each target (and what its rule looks through), and wakes `waiter` when any changes. */
  observe(waiter: string, targets: readonly ObjectRef[], asServiceAccount: Objects): Promise<Observation[]>;
  /** `waiter` no longer waits: its watches close unless someone else still needs them. */
  release(waiter: string): void;
}

interface Watch {
  informer: Informer;
  waiters: Set<string>;
  synced: Promise<boolean>;
}

export interface HealthWatchOptions {
  /** The controller's own identity. */
  client: KubeClient;
  discovery: Discovery;
  /** Called (synchronously) with each waiter whose targets changed. */
  wake(waiter: string): void;
  log: Logger;
}

export class HealthWatch implements HealthReader {
  readonly #opts: HealthWatchOptions;
  readonly #watches = new Map<string, Watch>();
  readonly #byWaiter = new Map<string, Set<string>>();

  constructor(opts: HealthWatchOptions) {
    this.#opts = opts;
  }

  /** Open watches, for metrics and tests. */
  get size(): number {
    return this.#watches.size;
  }

  async observe(
    waiter: string,
    targets: readonly ObjectRef[],
    asServiceAccount: Objects,
  ): Promise<Observation[]> {
    const used = new Set<string>();
    try {
      const out: Observation[] = [];
      for (const target of targets) out.push(await this.#observeOne(waiter, target, asServiceAccount, used));
      return out;
    } finally {
      // Watches of an earlier look this waiter no longer needs (e.g. a selector that changed).
      for (const key of this.#byWaiter.get(waiter) ?? []) if (!used.has(key)) this.#unsubscribe(waiter, key);
      if (used.size > 0) this.#byWaiter.set(waiter, used);
      else this.#byWaiter.delete(waiter);
    }
  }

  release(waiter: string): void {
    for (const key of this.#byWaiter.get(waiter) ?? []) this.#unsubscribe(waiter, key);
    this.#byWaiter.delete(waiter);
  }

  async stop(): Promise<void> {
    const watches = [...this.#watches.values()];
    this.#watches.clear();
    this.#byWaiter.clear();
    await Promise.all(watches.map((w) => w.informer.stop()));
  }

  async #observeOne(
    waiter: string,
    target: ObjectRef,
    asServiceAccount: Objects,
    used: Set<string>,
  ): Promise<Observation> {
    const mapping = await this.#opts.discovery.mapping(target.apiVersion, target.kind);
    const kindKey = `${mapping.group}/${mapping.kind}`;
    const polled = async (): Promise<Observation> => ({
      object: await asServiceAccount.find(target),
      related: {},
      polled: true,
    });
    if (!WATCHED_KINDS.has(kindKey)) return polled();

    const namespace = mapping.namespaced ? target.namespace : undefined;
    const own = await this.#cached(waiter, used, mapping, namespace, {
      field: `metadata.name=${target.name}`,
    });
    if (!own) return polled();
    const object = own[0];
    const related: RelatedObjects = {};
    const selector = object && WITH_PODS.has(kindKey) ? labelSelector(object) : undefined;
    if (selector) {
      const pods = await this.#cached(waiter, used, PODS, namespace, { label: selector });
      if (pods) related.pods = pods;
      if (kindKey === 'apps/Deployment') {
        const replicaSets = await this.#cached(waiter, used, REPLICA_SETS, namespace, { label: selector });
        if (replicaSets) related.replicaSets = replicaSets;
      }
    }
    return { object, related, polled: false };
  }

  /** The objects of one watch, opening it if needed; undefined when it cannot list (e.g. 403). */
  async #cached(
    waiter: string,
    used: Set<string>,
    mapping: ResourceMapping,
    namespace: string | undefined,
    selectors: { field?: string; label?: string },
  ): Promise<KubeObject[] | undefined> {
    const path = collectionPath(mapping, namespace);
    const key = `${path}?field=${selectors.field ?? ''}&label=${selectors.label ?? ''}`;
    let watch = this.#watches.get(key);
    if (!watch) {
      watch = this.#open(key, path, mapping, selectors);
      this.#watches.set(key, watch);
    }
    watch.waiters.add(waiter);
    used.add(key);
    if (!(await watch.synced) && !watch.informer.hasSynced()) return undefined;
    return watch.informer.list();
  }

  #open(
    key: string,
    path: string,
    mapping: ResourceMapping,
    selectors: { field?: string; label?: string },
  ): Watch {
    const waiters = new Set<string>();
    const wakeAll = () => {
      for (const w of waiters) this.#opts.wake(w);
    };
    const typeMeta = {
      apiVersion: mapping.group ? `${mapping.group}/${mapping.version}` : mapping.version,
      kind: mapping.kind,
    };
    const informer = new Informer({
      client: this.#opts.client,
      path,
      fieldSelector: selectors.field,
      labelSelector: selectors.label,
      resyncPeriodMs: 0,
      // Watch events carry apiVersion/kind; list items get them from the list. Keep both sure.
      transform: (obj: KubeObject) => dropManagedFields({ ...obj, ...typeMeta }),
      logger: this.#opts.log,
      handlers: { onAdd: wakeAll, onUpdate: wakeAll, onDelete: wakeAll },
    });
    informer.start();
    const synced = waitForSync(informer, SYNC_TIMEOUT_MS).then((ok) => {
      if (!ok) {
        this.#opts.log.warn(
          { watch: key, err: informer.lastListError() },
          'health gate cannot watch this; reading it by GET as the ServiceAccount instead',
        );
      }
      return ok;
    });
    return { informer, waiters, synced };
  }

  #unsubscribe(waiter: string, key: string): void {
    const watch = this.#watches.get(key);
    if (!watch) return;
    watch.waiters.delete(waiter);
    if (watch.waiters.size > 0) return;
    this.#watches.delete(key);
    void watch.informer.stop();
  }
}

/** Synced within `ms`, or not: a watch that cannot list (403, unknown) must not hold the gate up. */
async function waitForSync(informer: Informer, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([informer.waitForSync(), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A workload's spec.selector as a label selector string, e.g. "app=web,tier in (a,b)". */
export function labelSelector(obj: KubeObject): string | undefined {
  const selector = (obj as { spec?: { selector?: unknown } }).spec?.selector as
    | {
        matchLabels?: Record<string, string>;
        matchExpressions?: { key: string; operator: string; values?: string[] }[];
      }
    | undefined;
  if (!selector) return undefined;
  const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.length > 0 ? parts.join(',') : undefined;
}

/**
 * What the health gate sees of its targets, from list+watch caches shared by every transaction:
 * one informer per kind and namespace (Deployments of `shop`, Pods of `shop`, …), whatever the
 * number of targets in it. Each waiter registers what it follows there (the target by name, a
 * workload's pods and a Deployment's ReplicaSets by its selector, see gate-interests.ts); the
 * informer keeps only objects some waiter follows, so a namespace of many unrelated pods costs no
 * memory, and a change wakes only the waiters that follow the object. A watch opens at the first
 * look in its namespace and closes when no waiter is left; a waiter that joins a running watch
 * lists just its own objects (by name or selector) to seed it. So the gate costs at most a WATCH
 * stream per kind and namespace in use, not per object: a socket each (HTTP/1.1), from the pool
 * for streams, never the one requests use (src/kube/connection.ts), and at most
 * MAX_GATE_WATCHES of them; past that, targets are read by GET as below.
 *
 * The watches run as the controller (janus-tenant grants it get/list/watch on workloads and
 * pods). Kinds outside those, or a namespace that does not grant them, are read by GET as the
 * transaction's ServiceAccount instead, and the gate looks again every POLL_MS.
 */

import type { RelatedObjects } from '../health/index.ts';
import type { KubeClient } from '../kube/client.ts';
import { selectorOf, selectorString } from '../kube/label-selector.ts';
import {
  collectionPath,
  type Discovery,
  type KubeObject,
  type ObjectList,
  type ObjectRef,
  type Objects,
  type ResourceMapping,
} from '../kube/resources.ts';
import type { Logger } from '../log/index.ts';
import { Informer } from '../runtime/informer.ts';
import { dropManagedFields } from '../runtime/watch-stream.ts';
import {
  followed,
  type Interest,
  interestKey,
  interestQuery,
  matches,
  waitersFor,
} from './gate-interests.ts';

/** How often the gate reads again a target no watch tells it about. */
export const POLL_MS = 5_000;
/** How long a new watch may take to list before its target is read by GET instead. */
const SYNC_TIMEOUT_MS = 10_000;
/**
 * Watches the gate may hold at once (kinds × namespaces in use), below the connection's
 * STREAM_SOCKETS (128) so that the controller's own watches always find a socket.
 */
export const MAX_GATE_WATCHES = 96;

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
  /** waiter → interest key → interest. */
  interests: Map<string, Map<string, Interest>>;
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
  /** By collection path: one kind in one namespace. */
  readonly #watches = new Map<string, Watch>();
  readonly #byWaiter = new Map<string, Set<string>>();
  #overLimitLogged = false;

  constructor(opts: HealthWatchOptions) {
    this.#opts = opts;
  }

  /** Open watches, for metrics and tests. */
  get size(): number {
    return this.#watches.size;
  }

  /** Objects kept in memory across the watches, for tests and benchmarks. */
  get cached(): number {
    let n = 0;
    for (const w of this.#watches.values()) n += w.informer.keys().length;
    return n;
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
      // Interests of an earlier look this waiter no longer has (e.g. a selector that changed).
      for (const earlier of this.#byWaiter.get(waiter) ?? [])
        if (!used.has(earlier)) this.#drop(waiter, earlier);
      if (used.size > 0) this.#byWaiter.set(waiter, used);
      else this.#byWaiter.delete(waiter);
    }
  }

  release(waiter: string): void {
    for (const used of this.#byWaiter.get(waiter) ?? []) this.#drop(waiter, used);
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
    const own = await this.#follow(waiter, used, mapping, namespace, { by: 'name', name: target.name });
    if (!own) return polled();
    const object = own[0];
    const related: RelatedObjects = {};
    const selector = object && WITH_PODS.has(kindKey) ? selectorOf(object) : undefined;
    if (selector && selectorString(selector)) {
      const interest: Interest = { by: 'selector', selector };
      const pods = await this.#follow(waiter, used, PODS, namespace, interest);
      if (pods) related.pods = pods;
      if (kindKey === 'apps/Deployment') {
        const replicaSets = await this.#follow(waiter, used, REPLICA_SETS, namespace, interest);
        if (replicaSets) related.replicaSets = replicaSets;
      }
    }
    return { object, related, polled: false };
  }

  /**
   * The objects `interest` follows in the kind's namespace, from its shared watch (opened if
   * needed); undefined when that cannot list (e.g. 403) or the gate holds all its watches.
   */
  async #follow(
    waiter: string,
    used: Set<string>,
    mapping: ResourceMapping,
    namespace: string | undefined,
    interest: Interest,
  ): Promise<KubeObject[] | undefined> {
    const path = collectionPath(mapping, namespace);
    const running = this.#watches.get(path);
    const watch = running ?? this.#open(path, mapping);
    if (!watch) return undefined;
    const key = interestKey(interest);
    const own = watch.interests.get(waiter) ?? new Map<string, Interest>();
    watch.interests.set(waiter, own);
    const isNew = !own.has(key);
    own.set(key, interest);
    used.add(`${path}#${key}`);
    // A watch opened just now lists after this interest exists, so its LIST and events keep its
    // objects. One already running may have listed before they existed (the target this very
    // transaction created) and dropped their events until now: list just them, once it synced.
    const mustSeed = isNew && running !== undefined;
    if (!(await watch.synced) && !watch.informer.hasSynced()) return undefined;
    if (mustSeed && !(await this.#seed(watch, path, interest))) {
      own.delete(key); // look again next time
      return undefined;
    }
    return watch.informer.list().filter((obj) => matches(interest, obj));
  }

  async #seed(watch: Watch, path: string, interest: Interest): Promise<boolean> {
    type List = ObjectList<KubeObject>;
    const query = interestQuery(interest);
    try {
      await watch.informer.seed(
        async () => (await this.#opts.client.request<List>({ method: 'GET', path, query })).items,
      );
      return true;
    } catch (e) {
      this.#opts.log.warn(
        { watch: path, err: e },
        'health gate could not list what it follows; reading it by GET',
      );
      return false;
    }
  }

  #open(path: string, mapping: ResourceMapping): Watch | undefined {
    if (this.#watches.size >= MAX_GATE_WATCHES) {
      if (!this.#overLimitLogged)
        this.#opts.log.warn(
          { watch: path, limit: MAX_GATE_WATCHES },
          'health gate holds all the watches it may; reading further targets by GET every 5 s',
        );
      this.#overLimitLogged = true;
      return undefined;
    }
    const interests = new Map<string, Map<string, Interest>>();
    const wake = (...states: KubeObject[]) => {
      for (const w of waitersFor(interests, ...states)) this.#opts.wake(w);
    };
    const typeMeta = {
      apiVersion: mapping.group ? `${mapping.group}/${mapping.version}` : mapping.version,
      kind: mapping.kind,
    };
    const informer = new Informer({
      client: this.#opts.client,
      path,
      resyncPeriodMs: 0,
      // Watch events carry apiVersion/kind; list items get them from the list. Keep both sure.
      transform: (obj: KubeObject) => dropManagedFields({ ...obj, ...typeMeta }),
      keep: (obj) => followed(interests, obj),
      logger: this.#opts.log,
      handlers: {
        onAdd: (obj) => wake(obj),
        onUpdate: (old, obj) => wake(old, obj),
        onDelete: (obj) => wake(obj),
      },
    });
    informer.start();
    const synced = waitForSync(informer, SYNC_TIMEOUT_MS).then((ok) => {
      if (!ok) {
        this.#opts.log.warn(
          { watch: path, err: informer.lastListError() },
          'health gate cannot watch this; reading it by GET as the ServiceAccount instead',
        );
      }
      return ok;
    });
    const watch = { informer, interests, synced };
    this.#watches.set(path, watch);
    return watch;
  }

  /** `waiter` no longer follows `used` (`path#interest`): forget its objects, or close the watch. */
  #drop(waiter: string, used: string): void {
    const hash = used.indexOf('#');
    const [path, key] = [used.slice(0, hash), used.slice(hash + 1)];
    const watch = this.#watches.get(path);
    const own = watch?.interests.get(waiter);
    if (!watch || !own) return;
    own.delete(key);
    if (own.size === 0) watch.interests.delete(waiter);
    if (watch.interests.size > 0) {
      watch.informer.prune();
      return;
    }
    this.#watches.delete(path);
    this.#overLimitLogged = false;
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

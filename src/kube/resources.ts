/**
 * Generic access to any kind: maps apiVersion + kind to its REST path through discovery (cached
 * per group-version, refreshed once on a miss) and offers the verbs the saga needs.
 */
import type { ObjectMeta } from '../api/meta.ts';
import type { KubeClient, Query, UserExtra } from './client.ts';
import { PatchType } from './client.ts';
import { isNotFound } from './errors.ts';

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

export interface ObjectList<T = KubeObject> {
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string | undefined;
}

export interface ResourceMapping {
  group: string;
  version: string;
  kind: string;
  /** Plural resource name, e.g. "configmaps". */
  resource: string;
  namespaced: boolean;
}

export class UnknownKindError extends Error {
  override readonly name = 'UnknownKindError';
  constructor(apiVersion: string, kind: string, detail: string) {
    super(`the server does not serve kind ${kind} in ${apiVersion}${detail ? `: ${detail}` : ''}`);
  }
}

export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

interface ApiResourceList {
  resources: Array<{ name: string; kind: string; namespaced: boolean }>;
}

export class Discovery {
  readonly #client: KubeClient;
  readonly #byGroupVersion = new Map<string, Promise<Map<string, ResourceMapping>>>();

  constructor(client: KubeClient) {
    this.#client = client;
  }

  /** Seeds the cache so well-known kinds cost no discovery request. */
  seed(mapping: ResourceMapping): void {
    const gv = mapping.group ? `${mapping.group}/${mapping.version}` : mapping.version;
    const existing = this.#byGroupVersion.get(gv);
    const map = new Map<string, ResourceMapping>([[mapping.kind, mapping]]);
    if (existing) void existing.then((m) => m.set(mapping.kind, mapping));
    else this.#byGroupVersion.set(gv, Promise.resolve(map));
  }

  async mapping(apiVersion: string, kind: string): Promise<ResourceMapping> {
    const found = (await this.#load(apiVersion, false)).get(kind);
    if (found) return found;
    const refreshed = (await this.#load(apiVersion, true)).get(kind);
    if (!refreshed) throw new UnknownKindError(apiVersion, kind, '');
    return refreshed;
  }

  #load(apiVersion: string, refresh: boolean): Promise<Map<string, ResourceMapping>> {
    const cached = this.#byGroupVersion.get(apiVersion);
    if (cached && !refresh) return cached;
    const { group, version } = splitApiVersion(apiVersion);
    const path = group ? `/apis/${group}/${version}` : `/api/${version}`;
    const loading = this.#client.request<ApiResourceList>({ method: 'GET', path }).then(
      (list) => {
        const map = new Map<string, ResourceMapping>();
        for (const r of list.resources) {
          if (r.name.includes('/')) continue; // subresources
          map.set(r.kind, { group, version, kind: r.kind, resource: r.name, namespaced: r.namespaced });
        }
        return map;
      },
      (e: unknown) => {
        this.#byGroupVersion.delete(apiVersion);
        if (isNotFound(e)) throw new UnknownKindError(apiVersion, '(any)', 'unknown API group/version');
        throw e;
      },
    );
    this.#byGroupVersion.set(apiVersion, loading);
    return loading;
  }
}

export function collectionPath(m: ResourceMapping, namespace: string | undefined): string {
  const base = m.group ? `/apis/${m.group}/${m.version}` : `/api/${m.version}`;
  return m.namespaced && namespace
    ? `${base}/namespaces/${namespace}/${m.resource}`
    : `${base}/${m.resource}`;
}

export function objectPath(
  m: ResourceMapping,
  namespace: string | undefined,
  name: string,
  sub?: string,
): string {
  return `${collectionPath(m, namespace)}/${encodeURIComponent(name)}${sub ? `/${sub}` : ''}`;
}

export interface WriteOptions {
  dryRun?: boolean | undefined;
  fieldManager?: string | undefined;
}

export interface DeleteOptions {
  dryRun?: boolean | undefined;
  preconditions?: { resourceVersion?: string | undefined; uid?: string | undefined } | undefined;
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan' | undefined;
}

const writeQuery = (o: WriteOptions): Query => ({
  ...(o.dryRun && { dryRun: 'All' }),
  ...(o.fieldManager && { fieldManager: o.fieldManager }),
});

/** Verbs on objects of any kind, as one identity. */
export class Objects {
  readonly client: KubeClient;
  readonly discovery: Discovery;

  constructor(client: KubeClient, discovery: Discovery) {
    this.client = client;
    this.discovery = discovery;
  }

  as(user: string, extra?: UserExtra): Objects {
    return new Objects(this.client.as(user, extra), this.discovery);
  }

  async #path(ref: ObjectRef, sub?: string): Promise<string> {
    const m = await this.discovery.mapping(ref.apiVersion, ref.kind);
    return objectPath(m, ref.namespace, ref.name, sub);
  }

  async get<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T> {
    return this.client.request<T>({ method: 'GET', path: await this.#path(ref) });
  }

  /** Like get, but undefined when the object does not exist. */
  async find<T extends KubeObject = KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    try {
      return await this.get<T>(ref);
    } catch (e) {
      if (isNotFound(e)) return undefined;
      throw e;
    }
  }

  async list<T extends KubeObject = KubeObject>(
    apiVersion: string,
    kind: string,
    namespace?: string,
    query: Query = {},
  ): Promise<ObjectList<T>> {
    const m = await this.discovery.mapping(apiVersion, kind);
    return this.client.request<ObjectList<T>>({ method: 'GET', path: collectionPath(m, namespace), query });
  }

  async create<T extends KubeObject>(obj: T, opts: WriteOptions = {}): Promise<T> {
    const m = await this.discovery.mapping(obj.apiVersion, obj.kind);
    return this.client.request<T>({
      method: 'POST',
      path: collectionPath(m, obj.metadata.namespace),
      query: writeQuery(opts),
      body: obj,
    });
  }

  /** PUT; a metadata.resourceVersion in `obj` makes it conditional. */
  async replace<T extends KubeObject>(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.client.request<T>({
      method: 'PUT',
      path: await this.#path(refOf(obj)),
      query: writeQuery(opts),
      body: obj,
    });
  }

  /** Server-side apply; a metadata.resourceVersion in `obj` makes it conditional. */
  async apply<T extends KubeObject>(
    obj: T,
    opts: WriteOptions & { fieldManager: string; force?: boolean },
  ): Promise<T> {
    return this.client.request<T>({
      method: 'PATCH',
      path: await this.#path(refOf(obj)),
      query: { ...writeQuery(opts), ...(opts.force && { force: true }) },
      body: obj,
      contentType: PatchType.apply,
    });
  }

  async patch<T extends KubeObject>(
    ref: ObjectRef,
    body: unknown,
    contentType: string,
    opts: WriteOptions & { subresource?: string } = {},
  ): Promise<T> {
    return this.client.request<T>({
      method: 'PATCH',
      path: await this.#path(ref, opts.subresource),
      query: writeQuery(opts),
      body,
      contentType,
    });
  }

  /**
   * Every option goes in the DeleteOptions body: when a DELETE has a body, the API server ignores
   * its query parameters, so `?dryRun=All` next to a body would delete for real.
   */
  async delete(ref: ObjectRef, opts: DeleteOptions = {}): Promise<KubeObject | undefined> {
    const body: Record<string, unknown> = { apiVersion: 'v1', kind: 'DeleteOptions' };
    if (opts.preconditions) body.preconditions = opts.preconditions;
    if (opts.propagationPolicy) body.propagationPolicy = opts.propagationPolicy;
    if (opts.dryRun) body.dryRun = ['All'];
    return this.client.request<KubeObject | undefined>({
      method: 'DELETE',
      path: await this.#path(ref),
      body,
    });
  }
}

export function refOf(obj: KubeObject): ObjectRef {
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    name: obj.metadata.name,
    namespace: obj.metadata.namespace,
  };
}

/** Mappings of the kinds Janus itself reads and writes, so they need no discovery. */
export const CORE_MAPPINGS: readonly ResourceMapping[] = [
  { group: '', version: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true },
  { group: '', version: 'v1', kind: 'Secret', resource: 'secrets', namespaced: true },
  { group: '', version: 'v1', kind: 'ServiceAccount', resource: 'serviceaccounts', namespaced: true },
  { group: '', version: 'v1', kind: 'Namespace', resource: 'namespaces', namespaced: false },
  { group: '', version: 'v1', kind: 'Event', resource: 'events', namespaced: true },
  { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', resource: 'leases', namespaced: true },
];

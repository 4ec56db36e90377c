/**
 * An in-memory stand-in for the API server, behind a KubeClient's `request`: objects by path,
 * resourceVersion and uid preconditions (409 Conflict), AlreadyExists and NotFound, dry runs,
 * merge and JSON patches, server-side apply with field ownership (a field a manager stops
 * applying is removed when nobody else owns it; each manager's fields shown in
 * metadata.managedFields, an entry per manager and operation, as the server records them),
 * status subresources, a Secret's stringData,
 * generateName, label-selected collection lists and deletes. Enough for the saga stages, the
 * rollback store and the Lease locks to run as they do against a real server, without one: no
 * admission, no controllers, no watches. Every request is recorded; `before` can refuse one.
 */
import { type KubeClient, type KubeRequest, PatchType } from '../../src/kube/client.ts';
import { KubeApiError } from '../../src/kube/errors.ts';
import type { KubeObject, ObjectRef } from '../../src/kube/resources.ts';

export interface Recorded {
  method: string;
  path: string;
  /** The impersonated user, if any. */
  as: string | undefined;
  /** The user extras the impersonated request carries. */
  extra?: Readonly<Record<string, string>> | undefined;
  dryRun: boolean;
}

interface Location {
  /** The collection's path, e.g. /api/v1/namespaces/shop/configmaps. */
  collection: string;
  name: string | undefined;
  subresource: string | undefined;
}

const PLURALS: Record<string, string> = {
  ConfigMap: 'configmaps',
  Secret: 'secrets',
  Deployment: 'deployments',
  StatefulSet: 'statefulsets',
  ReplicaSet: 'replicasets',
  Pod: 'pods',
  Event: 'events',
  Namespace: 'namespaces',
  ServiceAccount: 'serviceaccounts',
  Lease: 'leases',
  Transaction: 'transactions',
  LockTable: 'locktables',
  InstanceClaim: 'instanceclaims',
};

/** Kinds whose status is a subresource: a write of the object leaves it, a write of /status only it. */
const WITH_STATUS = new Set(['Transaction', 'Deployment', 'StatefulSet', 'ReplicaSet', 'Pod']);

/** The manager of a write that names none (kubectl's default, roughly). */
const DEFAULT_MANAGER = 'unnamed-writer';

/** The path of an object, for the kinds the fake knows (PLURALS). */
export function pathOf(ref: ObjectRef): string {
  const plural = PLURALS[ref.kind];
  if (!plural) throw new Error(`fake API: unknown kind ${ref.kind}`);
  const base = ref.apiVersion.includes('/') ? `/apis/${ref.apiVersion}` : `/api/${ref.apiVersion}`;
  return `${base}${ref.namespace ? `/namespaces/${ref.namespace}` : ''}/${plural}/${ref.name}`;
}

function locate(path: string): Location {
  const parts = path.split('/').filter(Boolean);
  const prefix = parts[0] === 'api' ? 2 : 3;
  const rest = parts.slice(prefix);
  const namespaced = rest[0] === 'namespaces' && rest.length >= 3;
  const [plural, name, subresource] = namespaced ? rest.slice(2) : rest;
  const scope = namespaced ? `/namespaces/${rest[1]}` : '';
  return { collection: `/${parts.slice(0, prefix).join('/')}${scope}/${plural}`, name, subresource };
}

const clone = <T>(v: T): T => structuredClone(v);

function refuse(req: KubeRequest, status: number, reason: string, message: string): never {
  throw new KubeApiError(req.method, req.path, status, { kind: 'Status', reason, message, code: status });
}

/** RFC 7386: null removes, objects merge, everything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return clone(patch);
  const out: Record<string, unknown> =
    typeof target === 'object' && target !== null && !Array.isArray(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/** The few JSON patch operations Janus sends (finalizers, one-shot annotations). */
function jsonPatch(
  req: KubeRequest,
  obj: KubeObject,
  ops: Array<{ op: string; path: string; value?: unknown }>,
) {
  for (const { op, path, value } of ops) {
    const keys = path
      .split('/')
      .slice(1)
      .map((k) => k.replaceAll('~1', '/').replaceAll('~0', '~'));
    const last = keys.pop() as string;
    let parent = obj as unknown as Record<string, unknown>;
    for (const k of keys) parent = parent[k] as Record<string, unknown>;
    if (parent === undefined) refuse(req, 422, 'Invalid', `no parent for ${path}`);
    const list = Array.isArray(parent) ? (parent as unknown[]) : undefined;
    if (op === 'test' && JSON.stringify(parent[last]) !== JSON.stringify(value))
      refuse(req, 422, 'Invalid', `test failed at ${path}`);
    if (op === 'remove') {
      if (!(last in parent)) refuse(req, 422, 'Invalid', `nothing at ${path}`);
      if (list) list.splice(Number(last), 1);
      else delete parent[last];
    }
    if (op === 'add' || op === 'replace') {
      if (list && last === '-') list.push(value);
      else parent[last] = clone(value);
    }
  }
}

/**
 * The fields an object's writers own, each by its path (a JSON list of keys) with its value:
 * lists are atomic (one field), identity and status are nobody's.
 */
function fieldsOf(obj: unknown): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (v: unknown, path: string[]) => {
    if (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length > 0) {
      for (const [k, child] of Object.entries(v)) walk(child, [...path, k]);
    } else if (path.length > 0) out.set(JSON.stringify(path), JSON.stringify(v));
  };
  const { apiVersion: _a, kind: _k, status: _s, metadata, ...rest } = (obj ?? {}) as Record<string, unknown>;
  walk(rest, []);
  const meta = (metadata ?? {}) as Record<string, unknown>;
  for (const key of ['labels', 'annotations']) if (meta[key]) walk(meta[key], ['metadata', key]);
  return out;
}

/** Removes the field at `path` (fieldsOf's), and the maps it leaves empty. */
function removeField(obj: Record<string, unknown>, path: string): void {
  const keys = JSON.parse(path) as string[];
  const parents: Record<string, unknown>[] = [];
  let at: Record<string, unknown> | undefined = obj;
  for (const k of keys.slice(0, -1)) {
    parents.push(at);
    at = at?.[k] as Record<string, unknown> | undefined;
    if (typeof at !== 'object' || at === null) return;
  }
  delete at[keys.at(-1) as string];
  for (let i = parents.length - 1; i >= 0 && Object.keys(at ?? {}).length === 0; i--) {
    delete parents[i]?.[keys[i] as string];
    at = parents[i];
  }
}

/** A Secret's stringData, as the API server stores it: in data, base64. */
function withStringData(obj: KubeObject): KubeObject {
  const secret = obj as KubeObject & { stringData?: Record<string, string>; data?: Record<string, string> };
  if (obj.kind !== 'Secret' || !secret.stringData) return obj;
  const { stringData, ...rest } = secret;
  const encoded = Object.entries(stringData).map(([k, v]) => [k, Buffer.from(v).toString('base64')]);
  return { ...rest, data: { ...secret.data, ...Object.fromEntries(encoded) } } as KubeObject;
}

const matchesSelector = (obj: KubeObject, selector: string | undefined): boolean =>
  (selector ?? '')
    .split(',')
    .filter(Boolean)
    .every((term) => {
      const [k, v] = term.split('=');
      return obj.metadata.labels?.[k as string] === v;
    });

/**
 * Wraps every request of a client (and of those it impersonates): `serve` sends it on. How a
 * test makes a client fail, or die, at a chosen request.
 */
export type RequestGate = (req: KubeRequest, serve: () => Promise<unknown>) => Promise<unknown>;

export class FakeApi {
  readonly #objects = new Map<string, KubeObject>();
  /** By object path: the fields (fieldsOf paths) of each field manager and operation (ownerKey). */
  readonly #owners = new Map<string, Map<string, Set<string>>>();
  #version = 1000;
  readonly requests: Recorded[] = [];
  /** Called before each request is served; throw to refuse it. */
  before: (req: KubeRequest, as: string | undefined) => void = () => {};

  /**
   * A KubeClient whose requests this fake serves (as `user`, when impersonating, with its user
   * `extra`), through `gate`.
   */
  client(user?: string, gate?: RequestGate, extra?: Readonly<Record<string, string>>): KubeClient {
    const serve = async <T>(req: KubeRequest): Promise<T> => this.#serve(req, user, extra) as T;
    const fake = {
      impersonating: user,
      request: gate ? <T>(req: KubeRequest) => gate(req, () => serve(req)) as Promise<T> : serve,
      as: (other: string, otherExtra?: Readonly<Record<string, string>>) =>
        this.client(other, gate, otherExtra),
      forget: () => {},
    };
    return fake as unknown as KubeClient;
  }

  /**
   * Writes an object as someone else would (a new resourceVersion; generation moves with spec),
   * owning the fields it changes.
   */
  put<T extends KubeObject>(obj: T, manager = DEFAULT_MANAGER): T {
    const path = pathOf({ ...obj, name: obj.metadata.name, namespace: obj.metadata.namespace });
    const previous = this.#objects.get(path);
    const stored = this.#store(path, withStringData(clone(obj)), previous);
    return this.#own(path, previous, stored, manager) as T;
  }

  /** Server-side applies `config` as `manager`, forced, as another applier (a source's earlier commit) would. */
  apply<T extends KubeObject>(config: T, manager: string): T {
    const path = pathOf({ ...config, name: config.metadata.name, namespace: config.metadata.namespace });
    const previous = this.#objects.get(path);
    const [merged, applied] = this.#applied(path, previous, clone(config), manager);
    const stored = this.#store(path, merged, previous);
    return this.#own(path, previous, stored, manager, applied) as T;
  }

  /** Every object of a kind (in a namespace, if given), as stored. */
  list<T extends KubeObject = KubeObject>(kind: string, namespace?: string): T[] {
    const plural = `/${PLURALS[kind] ?? kind}/`;
    const scope = namespace === undefined ? '' : `/namespaces/${namespace}/`;
    return [...this.#objects.entries()]
      .filter(([p]) => p.includes(plural) && (!scope || p.includes(scope)))
      .map(([, o]) => clone(o) as T);
  }

  get<T extends KubeObject = KubeObject>(ref: ObjectRef): T | undefined {
    const found = this.#objects.get(pathOf(ref));
    return found && (clone(found) as T);
  }

  remove(ref: ObjectRef): void {
    this.#objects.delete(pathOf(ref));
    this.#owners.delete(pathOf(ref));
  }

  /** Sets an object's status as its controller would, having observed its generation. */
  setStatus(ref: ObjectRef, status: Record<string, unknown>): void {
    const path = pathOf(ref);
    const obj = this.#objects.get(path);
    if (!obj) throw new Error(`fake API: ${path} does not exist`);
    const observedGeneration = obj.metadata.generation;
    this.#objects.set(path, {
      ...obj,
      metadata: { ...obj.metadata, resourceVersion: String(++this.#version) },
      status: { observedGeneration, ...status },
    } as KubeObject);
  }

  #store(path: string, written: KubeObject, previous: KubeObject | undefined): KubeObject {
    // What the writer says of managedFields is not taken: #own records them.
    const { managedFields: _managedFields, ...meta } = written.metadata;
    const obj = { ...written, metadata: meta } as KubeObject;
    const specChanged =
      !previous ||
      JSON.stringify((previous as { spec?: unknown }).spec) !==
        JSON.stringify((obj as { spec?: unknown }).spec);
    obj.metadata = {
      ...obj.metadata,
      uid: previous?.metadata.uid ?? obj.metadata.uid ?? `uid-${this.#version}`,
      resourceVersion: String(++this.#version),
      generation: (previous?.metadata.generation ?? 0) + (specChanged ? 1 : 0),
    };
    this.#objects.set(path, obj);
    return clone(obj);
  }

  #serve(
    req: KubeRequest,
    as: string | undefined,
    extra: Readonly<Record<string, string>> | undefined,
  ): unknown {
    const body = req.body as RequestBody | undefined;
    const dryRun = req.query?.dryRun === 'All' || (body?.dryRun?.includes('All') ?? false);
    this.requests.push({ method: req.method, path: req.path, as, ...(extra && { extra }), dryRun });
    this.before(req, as);
    const at = locate(req.path);
    return at.name === undefined
      ? this.#serveCollection(req, at.collection, dryRun)
      : this.#serveObject(req, `${at.collection}/${at.name}`, at.subresource, dryRun);
  }

  #serveCollection(req: KubeRequest, collection: string, dryRun: boolean): unknown {
    if (req.method === 'POST') {
      const created = withoutStatus(withStringData(clone(req.body as KubeObject)));
      const { name, generateName } = created.metadata;
      if (!name && generateName) created.metadata.name = `${generateName}${++this.#version}`;
      const path = `${collection}/${created.metadata.name}`;
      if (this.#objects.has(path)) refuse(req, 409, 'AlreadyExists', `${path} already exists`);
      if (dryRun) return created;
      const stored = this.#store(path, created, undefined);
      return this.#own(path, undefined, stored, managerOf(req));
    }
    const selector = req.query?.labelSelector as string | undefined;
    const selected = [...this.#objects.entries()].filter(
      ([p, o]) => p.startsWith(`${collection}/`) && matchesSelector(o, selector),
    );
    if (req.method === 'DELETE') {
      for (const [p] of selected) {
        this.#objects.delete(p);
        this.#owners.delete(p);
      }
      return {};
    }
    return { metadata: {}, items: selected.map(([, o]) => clone(o)) };
  }

  #serveObject(req: KubeRequest, path: string, subresource: string | undefined, dryRun: boolean): unknown {
    const body = req.body as RequestBody | undefined;
    const existing = this.#objects.get(path);
    const write = (obj: KubeObject, applied?: Map<string, string>) => {
      const next = this.#asWritten(withStringData(obj), existing, subresource);
      if (dryRun) return clone(next);
      const stored = this.#store(path, next, existing);
      return this.#own(path, existing, stored, managerOf(req), applied, subresource === 'status');
    };
    if (req.method === 'PATCH' && req.contentType === PatchType.apply) {
      staleUnless(req, existing, body?.metadata.resourceVersion);
      return write(...this.#applied(path, existing, body as KubeObject, managerOf(req)));
    }
    if (!existing) return refuse(req, 404, 'NotFound', `${path} not found`);
    switch (req.method) {
      case 'GET':
        return clone(existing);
      case 'PUT':
        staleUnless(req, existing, body?.metadata.resourceVersion);
        return write(clone(body as KubeObject));
      case 'PATCH': {
        if (req.contentType !== PatchType.json) {
          // As the API server: a resourceVersion in a merge patch is a precondition.
          staleUnless(req, existing, body?.metadata?.resourceVersion);
          return write(mergePatch(existing, req.body) as KubeObject);
        }
        const patched = clone(existing);
        jsonPatch(req, patched, req.body as JsonPatch);
        return write(patched);
      }
      case 'DELETE':
        staleUnless(req, existing, body?.preconditions?.resourceVersion);
        uidUnless(req, existing, body?.preconditions?.uid);
        if (!dryRun) {
          this.#objects.delete(path);
          this.#owners.delete(path);
        }
        return clone(existing);
      default:
        return refuse(req, 405, 'MethodNotAllowed', req.method);
    }
  }

  /**
   * What a write stores: through /status only the status changes; through the object itself, the
   * status of a kind with a status subresource stays as it was.
   */
  #asWritten(obj: KubeObject, existing: KubeObject | undefined, subresource: string | undefined): KubeObject {
    if (subresource === 'status' && existing) {
      return { ...clone(existing), status: (obj as { status?: unknown }).status } as KubeObject;
    }
    if (!WITH_STATUS.has(obj.kind ?? existing?.kind ?? '')) return obj;
    const status = (existing as { status?: unknown } | undefined)?.status;
    return { ...withoutStatus(obj), ...(status !== undefined && { status: clone(status) }) } as KubeObject;
  }

  /**
   * Server-side apply, forced: the applied fields over the object (or a new one), less the fields
   * this manager applied before, no longer applies, and nobody else owns.
   */
  #applied(
    path: string,
    existing: KubeObject | undefined,
    config: KubeObject,
    manager: string,
  ): [KubeObject, Map<string, string>] {
    const applied = fieldsOf(config);
    const merged = mergePatch(existing ?? {}, config) as KubeObject;
    const owners = this.#owners.get(path);
    const mine = ownerKey(manager, 'Apply');
    for (const field of owners?.get(mine) ?? []) {
      if (applied.has(field)) continue;
      const others = [...(owners?.entries() ?? [])].some(([o, fields]) => o !== mine && fields.has(field));
      if (!others) removeField(merged as unknown as Record<string, unknown>, field);
    }
    return [merged, applied];
  }

  /**
   * Field ownership after a write by `manager` (none through /status), recorded in the stored
   * object's managedFields, which it returns.
   */
  #own(
    path: string,
    before: KubeObject | undefined,
    after: KubeObject,
    manager: string,
    applied?: Map<string, string>,
    statusOnly = false,
  ): KubeObject {
    const owners = this.#owners.get(path) ?? new Map<string, Set<string>>();
    this.#owners.set(path, owners);
    if (!statusOnly) transferOwnership(owners, before, after, manager, applied);
    const managedFields = [...owners].map(([o, fields]) => ({
      ...(JSON.parse(o) as { manager: string; operation: string }),
      apiVersion: after.apiVersion,
      fieldsType: 'FieldsV1',
      fieldsV1: fieldsV1Of(fields),
    }));
    const { managedFields: _before, ...metadata } = after.metadata;
    const stored = {
      ...after,
      metadata: { ...metadata, ...(managedFields.length > 0 && { managedFields }) },
    } as KubeObject;
    this.#objects.set(path, stored);
    return clone(stored);
  }
}

/**
 * The owners' fields after a write by `manager`: an apply owns exactly what it applied, an update
 * the fields it changed; a field whose value changed is nobody else's; a field gone is nobody's;
 * a manager left with no field has no entry.
 */
function transferOwnership(
  owners: Map<string, Set<string>>,
  before: KubeObject | undefined,
  after: KubeObject,
  manager: string,
  applied: Map<string, string> | undefined,
): void {
  const old = fieldsOf(before);
  const now = fieldsOf(after);
  const writer = ownerKey(manager, applied ? 'Apply' : 'Update');
  const changed = new Set([...now.keys()].filter((f) => old.get(f) !== now.get(f)));
  for (const [o, fields] of owners) {
    for (const f of fields) if (!now.has(f) || (o !== writer && changed.has(f))) fields.delete(f);
  }
  const mine = applied ? new Set(applied.keys()) : (owners.get(writer) ?? new Set<string>());
  if (!applied) for (const f of changed) mine.add(f);
  owners.set(writer, mine);
  for (const [o, fields] of owners) if (fields.size === 0) owners.delete(o);
}

/** A field manager's entry: its name and operation (Apply or Update), as managedFields tells them apart. */
const ownerKey = (manager: string, operation: 'Apply' | 'Update'): string =>
  JSON.stringify({ manager, operation });

/** FieldsV1 of fieldsOf paths: `f:<key>` per map key, each path's last key owning all below it. */
function fieldsV1Of(paths: Iterable<string>): Record<string, unknown> {
  const root: Record<string, Record<string, unknown>> = {};
  for (const path of paths) {
    let at = root;
    for (const key of JSON.parse(path) as string[]) {
      at[`f:${key}`] ??= {};
      at = at[`f:${key}`] as Record<string, Record<string, unknown>>;
    }
  }
  return root;
}

type RequestBody = KubeObject & {
  dryRun?: string[];
  preconditions?: { resourceVersion?: string; uid?: string };
};
type JsonPatch = Array<{ op: string; path: string; value?: unknown }>;

function withoutStatus(obj: KubeObject): KubeObject {
  if (!WITH_STATUS.has(obj.kind)) return obj;
  const { status: _status, ...rest } = obj as KubeObject & { status?: unknown };
  return rest as KubeObject;
}

const managerOf = (req: KubeRequest): string => String(req.query?.fieldManager ?? DEFAULT_MANAGER);

/** A delete conditional on `uid` fails with 409 Conflict when the object is another of the name. */
function uidUnless(req: KubeRequest, existing: KubeObject, uid: string | undefined) {
  if (uid && uid !== existing.metadata.uid) {
    refuse(
      req,
      409,
      'Conflict',
      `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${existing.metadata.uid}`,
    );
  }
}

/** A write conditional on `resourceVersion` fails with 409 Conflict once the object moved on. */
function staleUnless(
  req: KubeRequest,
  existing: KubeObject | undefined,
  resourceVersion: string | undefined,
) {
  if (resourceVersion && existing && resourceVersion !== existing.metadata.resourceVersion) {
    refuse(
      req,
      409,
      'Conflict',
      'the object has been modified; please apply your changes to the latest version',
    );
  }
}

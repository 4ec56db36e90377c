/**
 * An in-memory stand-in for the API server, behind a KubeClient's `request`: objects by path,
 * resourceVersion preconditions (409 Conflict), AlreadyExists and NotFound, dry runs, merge and
 * JSON patches, label-selected collection deletes. Enough for the saga stages, the rollback store
 * and the Lease locks to run as they do against a real server, without one: no admission, no
 * controllers, no watches. Every request is recorded; `before` can refuse one.
 */
import { type KubeClient, type KubeRequest, PatchType } from '../../src/kube/client.ts';
import { KubeApiError } from '../../src/kube/errors.ts';
import type { KubeObject, ObjectRef } from '../../src/kube/resources.ts';

export interface Recorded {
  method: string;
  path: string;
  /** The impersonated user, if any. */
  as: string | undefined;
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
  ServiceAccount: 'serviceaccounts',
  Lease: 'leases',
  Transaction: 'transactions',
};

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

const matchesSelector = (obj: KubeObject, selector: string | undefined): boolean =>
  (selector ?? '')
    .split(',')
    .filter(Boolean)
    .every((term) => {
      const [k, v] = term.split('=');
      return obj.metadata.labels?.[k as string] === v;
    });

export class FakeApi {
  readonly #objects = new Map<string, KubeObject>();
  #version = 1000;
  readonly requests: Recorded[] = [];
  /** Called before each request is served; throw to refuse it. */
  before: (req: KubeRequest, as: string | undefined) => void = () => {};

  /** A KubeClient whose requests this fake serves (as `user`, when impersonating). */
  client(user?: string): KubeClient {
    const fake = {
      impersonating: user,
      request: async <T>(req: KubeRequest): Promise<T> => this.#serve(req, user) as T,
      as: (other: string) => this.client(other),
      forget: () => {},
    };
    return fake as unknown as KubeClient;
  }

  /** Writes an object as someone else would (a new resourceVersion; generation moves with spec). */
  put<T extends KubeObject>(obj: T): T {
    const path = pathOf({ ...obj, name: obj.metadata.name, namespace: obj.metadata.namespace });
    return this.#store(path, clone(obj), this.#objects.get(path)) as T;
  }

  get<T extends KubeObject = KubeObject>(ref: ObjectRef): T | undefined {
    const found = this.#objects.get(pathOf(ref));
    return found && (clone(found) as T);
  }

  remove(ref: ObjectRef): void {
    this.#objects.delete(pathOf(ref));
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

  #store(path: string, obj: KubeObject, previous: KubeObject | undefined): KubeObject {
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

  #serve(req: KubeRequest, as: string | undefined): unknown {
    const body = req.body as RequestBody | undefined;
    const dryRun = req.query?.dryRun === 'All' || (body?.dryRun?.includes('All') ?? false);
    this.requests.push({ method: req.method, path: req.path, as, dryRun });
    this.before(req, as);
    const at = locate(req.path);
    return at.name === undefined
      ? this.#serveCollection(req, at.collection, dryRun)
      : this.#serveObject(req, `${at.collection}/${at.name}`, at.subresource, dryRun);
  }

  #serveCollection(req: KubeRequest, collection: string, dryRun: boolean): unknown {
    if (req.method === 'POST') {
      const created = clone(req.body as KubeObject);
      const path = `${collection}/${created.metadata.name}`;
      if (this.#objects.has(path)) refuse(req, 409, 'AlreadyExists', `${path} already exists`);
      return dryRun ? created : this.#store(path, created, undefined);
    }
    const selector = req.query?.labelSelector as string | undefined;
    const selected = [...this.#objects.entries()].filter(
      ([p, o]) => p.startsWith(`${collection}/`) && matchesSelector(o, selector),
    );
    if (req.method === 'DELETE') {
      for (const [p] of selected) this.#objects.delete(p);
      return {};
    }
    return { metadata: {}, items: selected.map(([, o]) => clone(o)) };
  }

  #serveObject(req: KubeRequest, path: string, subresource: string | undefined, dryRun: boolean): unknown {
    const body = req.body as RequestBody | undefined;
    const existing = this.#objects.get(path);
    const write = (obj: KubeObject) => (dryRun ? clone(obj) : this.#store(path, obj, existing));
    if (req.method === 'PATCH' && req.contentType === PatchType.apply) {
      // Server-side apply, simplified: the applied fields merged over the object, or a new one.
      staleUnless(req, existing, body?.metadata.resourceVersion);
      return write(mergePatch(existing ?? {}, body) as KubeObject);
    }
    if (!existing) return refuse(req, 404, 'NotFound', `${path} not found`);
    switch (req.method) {
      case 'GET':
        return clone(existing);
      case 'PUT': {
        staleUnless(req, existing, body?.metadata.resourceVersion);
        const spec = (existing as { spec?: unknown }).spec;
        return write({ ...clone(body as KubeObject), ...(subresource && { spec }) });
      }
      case 'PATCH': {
        if (req.contentType !== PatchType.json) return write(mergePatch(existing, req.body) as KubeObject);
        const patched = clone(existing);
        jsonPatch(req, patched, req.body as JsonPatch);
        return write(patched);
      }
      case 'DELETE':
        staleUnless(req, existing, body?.preconditions?.resourceVersion);
        if (!dryRun) this.#objects.delete(path);
        return clone(existing);
      default:
        return refuse(req, 405, 'MethodNotAllowed', req.method);
    }
  }
}

type RequestBody = KubeObject & { dryRun?: string[]; preconditions?: { resourceVersion?: string } };
type JsonPatch = Array<{ op: string; path: string; value?: unknown }>;

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

/**
 * The Git side's requests about Sources, as the controller identity (the only writer the
 * admission policy janus-source-provenance lets through): the Sources this repository declared,
 * kept in step with their files (created, replaced when the file changed, deleted when it is gone,
 * docs/sources.md), their status written conditionally, and the Transaction a status names read
 * straight from the API server, never from a cache that may lag behind a create.
 */
import { createHash } from 'node:crypto';
import {
  ANNOTATION_SOURCE_PATH,
  ANNOTATION_SOURCE_REPOSITORY,
  ANNOTATION_SOURCE_REVISION,
  API_VERSION,
  GROUP,
  KIND,
  LABEL_MANAGED_BY,
  MANAGED_BY,
  SOURCE_KIND,
  SOURCE_PLURAL,
  type Source,
  type SourceStatus,
  type Transaction,
  VERSION,
} from '../api/v1alpha1/index.ts';
import { canonicalJson, type Json } from '../changes/undo-rules.ts';
import { transactionSelector, withInstanceLabel } from '../controller/installation.ts';
import { isAlreadyExists, isInvalid, isNotFound } from '../kube/errors.ts';
import { type Objects, objectPath, type ResourceMapping, UnknownKindError } from '../kube/resources.ts';
import { TRANSACTION_MAPPING } from '../kube/transactions.ts';
import type { SourceDeclaration } from './declaration.ts';
import type { KindToLookUp, Scope } from './object-policy.ts';

export const SOURCE_MAPPING: ResourceMapping = {
  group: GROUP,
  version: VERSION,
  kind: SOURCE_KIND,
  resource: SOURCE_PLURAL,
  namespaced: true,
};

/** A digest of what a Source was made from: a declaration that changed replaces it. */
export const ANNOTATION_SOURCE_DECLARATION = `${GROUP}/source-declaration`;

/** Where the Sources of one watched repository and branch come from. */
export interface SourceOrigin {
  repository: string;
  branch: string;
  instance: string | undefined;
}

/** The Source a declaration makes, at `commit` (its revision annotation). */
export function desiredSource(d: SourceDeclaration, origin: SourceOrigin, commit: string): Source {
  const labels = withInstanceLabel({ ...d.labels, [LABEL_MANAGED_BY]: MANAGED_BY }, origin.instance);
  const made = {
    labels,
    annotations: {
      ...d.annotations,
      [ANNOTATION_SOURCE_REPOSITORY]: origin.repository,
      [ANNOTATION_SOURCE_PATH]: d.file,
    },
    spec: d.spec,
  };
  const digest = createHash('sha256')
    .update(canonicalJson(made as unknown as Json))
    .digest('hex')
    .slice(0, 32);
  return {
    apiVersion: API_VERSION,
    kind: SOURCE_KIND,
    metadata: {
      name: d.name,
      namespace: d.namespace,
      ...(labels && { labels }),
      annotations: {
        ...made.annotations,
        [ANNOTATION_SOURCE_REVISION]: `${origin.branch}@sha1:${commit}`,
        [ANNOTATION_SOURCE_DECLARATION]: digest,
      },
    },
    spec: d.spec,
  };
}

/** Whether `source` was made by `origin`'s repository and branch (only the controller writes these). */
export function madeBy(source: Pick<Source, 'metadata'>, origin: SourceOrigin): boolean {
  const a = source.metadata.annotations ?? {};
  return (
    a[ANNOTATION_SOURCE_REPOSITORY] === origin.repository &&
    (a[ANNOTATION_SOURCE_REVISION] ?? '').startsWith(`${origin.branch}@sha1:`)
  );
}

/** Whether the Source in the cluster is the one `desired` describes (its declaration unchanged). */
export function isCurrent(found: Pick<Source, 'metadata'>, desired: Pick<Source, 'metadata'>): boolean {
  const digest = (s: Pick<Source, 'metadata'>) => s.metadata.annotations?.[ANNOTATION_SOURCE_DECLARATION];
  return digest(found) !== undefined && digest(found) === digest(desired);
}

export type SourceWrite = { kind: 'written'; source: Source } | { kind: 'refused'; message: string };

const PAGE = 500;

export class SourceApi {
  readonly #objects: Objects;
  readonly #origin: SourceOrigin;
  readonly #watchNamespace: string | undefined;

  constructor(objects: Objects, origin: SourceOrigin, watchNamespace: string | undefined) {
    this.#objects = objects;
    this.#origin = origin;
    this.#watchNamespace = watchNamespace;
    objects.discovery.seed(SOURCE_MAPPING);
    objects.discovery.seed(TRANSACTION_MAPPING);
  }

  get origin(): SourceOrigin {
    return this.#origin;
  }

  /** The Sources this repository and branch made (this installation's, in the watched namespace). */
  async list(): Promise<Source[]> {
    const found: Source[] = [];
    let token: string | undefined;
    do {
      const page = await this.#objects.list<Source>(API_VERSION, SOURCE_KIND, this.#watchNamespace, {
        labelSelector: `${LABEL_MANAGED_BY}=${MANAGED_BY},${transactionSelector(this.#origin.instance)}`,
        limit: String(PAGE),
        ...(token && { continue: token }),
      });
      found.push(...page.items.filter((s) => madeBy(s, this.#origin)));
      token = page.metadata?.continue || undefined;
    } while (token);
    return found;
  }

  /** Creates `desired`; one of its name that this repository did not make is refused, not touched. */
  async create(desired: Source): Promise<SourceWrite> {
    try {
      return { kind: 'written', source: await this.#objects.create(desired) };
    } catch (error) {
      const refused = refusal(error, desired);
      if (refused) return refused;
      if (!isAlreadyExists(error)) throw error;
      const existing = await this.#objects.find<Source>(refOf(desired));
      if (existing && madeBy(existing, this.#origin)) return this.replace(existing, desired);
      return {
        kind: 'refused',
        message: `a Source ${desired.metadata.namespace}/${desired.metadata.name} already exists and was not declared by ${this.#origin.repository} (${this.#origin.branch}); rename the file`,
      };
    }
  }

  /** Replaces `found` by `desired`, keeping its status, conditional on the version read. */
  async replace(found: Source, desired: Source): Promise<SourceWrite> {
    try {
      const source = await this.#objects.replace<Source>({
        ...desired,
        metadata: { ...desired.metadata, resourceVersion: found.metadata.resourceVersion ?? '' },
      });
      return { kind: 'written', source };
    } catch (error) {
      const refused = refusal(error, desired);
      if (refused) return refused;
      throw error;
    }
  }

  /** Deletes a Source whose file is gone; the objects it applied stay in the cluster. */
  async delete(source: Source): Promise<void> {
    try {
      await this.#objects.delete(refOf(source), { preconditions: { uid: source.metadata.uid } });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /** Writes `status`, conditional on the version of `source`; returns the Source as written. */
  async writeStatus(source: Source, status: SourceStatus): Promise<Source> {
    const path = objectPath(SOURCE_MAPPING, source.metadata.namespace, source.metadata.name, 'status');
    return this.#objects.client.request<Source>({
      method: 'PUT',
      path,
      body: { ...source, status },
    });
  }

  /** The Transaction `namespace/name` as the API server has it now. */
  findTransaction(namespace: string, name: string): Promise<Transaction | undefined> {
    return this.#objects.find<Transaction>({ apiVersion: API_VERSION, kind: KIND, namespace, name });
  }
}

function refOf(source: Source) {
  return {
    apiVersion: API_VERSION,
    kind: SOURCE_KIND,
    namespace: source.metadata.namespace,
    name: source.metadata.name,
  };
}

/**
 * What is the declaration's fault: a Source the API server finds invalid (a rule only it knows), a
 * namespace that does not exist. Anything else (network, Janus's own RBAC) is thrown: the poll fails.
 */
function refusal(error: unknown, desired: Source): SourceWrite | undefined {
  if (isInvalid(error))
    return { kind: 'refused', message: `the API server refused the Source: ${error.serverMessage}` };
  if (isNotFound(error))
    return {
      kind: 'refused',
      message: `namespace ${JSON.stringify(desired.metadata.namespace)} does not exist`,
    };
  return undefined;
}

/** The scopes of kinds from the cluster's discovery: Unknown for a kind it does not serve. */
export async function discoveredScopes(
  objects: Objects,
  kinds: readonly KindToLookUp[],
): Promise<Map<string, Scope>> {
  const scopes = new Map<string, Scope>();
  for (const { key, apiVersion, kind } of kinds) {
    try {
      const mapping = await objects.discovery.mapping(apiVersion, kind);
      scopes.set(key, mapping.namespaced ? 'Namespaced' : 'Cluster');
    } catch (error) {
      if (!(error instanceof UnknownKindError)) throw error;
      scopes.set(key, 'Unknown');
    }
  }
  return scopes;
}

/**
 * One source rendered and checked (docs/sources.md, "What a commit does", steps 1 and 2): the
 * render through the shared Renderer (fair, sandboxed), then its bounds (objects, bytes), then
 * every object against the repository's policy, its namespace resolved. What `janus run` does at
 * each commit, `janus validate` on a local folder, and drift detection and `janus plan` reuse: a
 * checkout function says where the files come from (a commit, a folder). Never throws for what the
 * repository holds; rejects only for what is no fault of it (the object store, discovery).
 */
import { type InventoryEntry, MAX_SOURCE_OBJECTS } from '../api/v1alpha1/index.ts';
import type { RepositoryPolicy } from '../gitops/policy.ts';
import type { KubeObject } from '../kube/resources.ts';
import type { Checkout } from '../render/checkout.ts';
import { type DecryptedInput, type Decryption, decryptedRedactor } from '../render/decrypt-inputs.ts';
import type { Renderer } from '../render/renderer.ts';
import type { RenderFailure } from '../render/types.ts';
import { recipientsOf } from '../sops/data-key.ts';
import { renderRequestOf, type SourceDeclaration } from './declaration.ts';
import { inventoryEntry, renderDigest } from './inventory.ts';
import {
  checkRenderedObjects,
  type KindToLookUp,
  type ObjectRefusal,
  type Scope,
  scopesFromRender,
} from './object-policy.ts';
import { type Sealed, sealedObjects } from './sealed-objects.ts';

/** Rendered YAML a source may have (docs/sources.md): its first apply is one Transaction. */
export const MAX_SOURCE_BYTES = 8 * 1024 * 1024;

export interface SourceRenderContext {
  renderer: Renderer;
  policy: RepositoryPolicy;
  /**
   * The scopes of the kinds the render does not settle, by "group/Kind": discovery in `janus run`
   * (Unknown for a kind the cluster does not serve); offline, Namespaced (offlineScopes).
   */
  lookupScopes(kinds: readonly KindToLookUp[]): Promise<ReadonlyMap<string, Scope>>;
  /** The controller's key of inventory digests (inventory.ts). */
  digestKey: string | Uint8Array;
  /** The keys of the source's SOPS files (`janus run`); none: they are left encrypted (offline). */
  decryption?: Decryption | undefined;
}

export type SourceRender =
  | {
      kind: 'rendered';
      /** In apply order, namespaces resolved. */
      objects: KubeObject[];
      /** Their inventory entries, in the same order. */
      entries: InventoryEntry[];
      /** renderDigest of the entries. */
      digest: string;
      bytes: number;
      /** When the render decrypted SOPS files: the objects to keep encrypted in the Transaction. */
      sealed?: Sealed | undefined;
      /** The SOPS files it decrypted (`janus plan` redacts their values from all it prints). */
      decrypted?: readonly DecryptedInput[] | undefined;
    }
  | { kind: 'failed'; failure: RenderFailure }
  /**
   * A bound or the policy refused it; `more` refusals are not listed. The names they quote are
   * redacted of decrypted values (an object may be named after one), as a failure's message is.
   */
  | { kind: 'refused'; refusals: ObjectRefusal[]; more: number };

export async function renderSource(
  source: Pick<SourceDeclaration, 'name' | 'namespace' | 'spec'>,
  checkout: () => Promise<Checkout>,
  context: SourceRenderContext,
): Promise<SourceRender> {
  // The keys the render decrypted with: their recipients are those the Transaction seals to.
  let identities: readonly string[] = [];
  const keys = context.decryption;
  const decryption: Decryption | undefined = keys && {
    async identities() {
      identities = await keys.identities();
      return identities;
    },
  };
  const result = await context.renderer.render({
    source: `${source.namespace}/${source.name}`,
    request: renderRequestOf(source),
    checkout,
    decryption,
  });
  if (!result.ok) return { kind: 'failed', failure: result.failure };
  const bound = boundProblem(result.objects.length, result.bytes);
  if (bound) return { kind: 'refused', refusals: [{ rule: 'bounds', message: bound }], more: 0 };
  const { known, unknown } = scopesFromRender(result.objects);
  const scopes = new Map(known);
  if (unknown.length > 0)
    for (const [key, scope] of await context.lookupScopes(unknown)) scopes.set(key, scope);
  const decrypted = result.decrypted ?? [];
  const redact = decryptedRedactor(decrypted);
  const refused = (refusals: readonly ObjectRefusal[], more: number): SourceRender => ({
    kind: 'refused',
    refusals: refusals.map((r) => ({
      ...r,
      ...(r.object !== undefined && { object: redact(r.object) }),
      message: redact(r.message),
    })),
    more,
  });
  const checked = checkRenderedObjects(result.objects, {
    namespace: source.namespace,
    policy: context.policy,
    scopes,
  });
  if (!checked.ok) return refused(checked.refusals, checked.more);
  const recipients = decrypted.length > 0 ? [...(await recipientsOf(identities)).keys()] : [];
  const secrets = sealedObjects(checked.objects, decrypted, context.policy.sopsKinds, recipients);
  if (!secrets.ok) return refused(secrets.refusals, secrets.more);
  const entries = checked.objects.map((o) => inventoryEntry(o, context.digestKey));
  return {
    kind: 'rendered',
    objects: checked.objects,
    entries,
    digest: renderDigest(entries, context.digestKey),
    bytes: result.bytes,
    sealed: secrets.sealed,
    ...(decrypted.length > 0 && { decrypted }),
  };
}

function boundProblem(objects: number, bytes: number): string | undefined {
  if (objects > MAX_SOURCE_OBJECTS)
    return `the render has ${objects} objects; a source may render at most ${MAX_SOURCE_OBJECTS}: split it into several sources`;
  if (bytes > MAX_SOURCE_BYTES)
    return `the render is ${bytes} bytes of YAML; a source may render at most ${MAX_SOURCE_BYTES} (8 MiB): split it into several sources`;
  return undefined;
}

/** Offline (`janus validate`): a kind the render does not settle is taken to be namespaced. */
export async function offlineScopes(kinds: readonly KindToLookUp[]): Promise<ReadonlyMap<string, Scope>> {
  return new Map(kinds.map((k) => [k.key, 'Namespaced' as const]));
}

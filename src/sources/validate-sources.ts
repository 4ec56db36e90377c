/**
 * `janus validate` of a repository's sources (docs/sources.md), offline: each declaration read
 * and checked as `janus run` reads it (declaration.ts, the same function), then rendered from the
 * local folder in the same sandbox, and every object checked against the policy and the bounds.
 * Kinds the render does not settle are taken to be namespaced (no cluster to ask).
 */
import { randomBytes } from 'node:crypto';
import { diskReader } from '../gitops/disk-reader.ts';
import type { RepositoryPolicy } from '../gitops/policy.ts';
import { localCheckout } from '../render/checkout.ts';
import type { Renderer } from '../render/renderer.ts';
import type { Diagnostic } from '../yaml/diagnostic.ts';
import { changesForRender } from './changes-for-render.ts';
import { readDeclarations, type SourceDeclaration } from './declaration.ts';
import { offlineScopes, renderSource } from './render-source.ts';
import { renderDiagnostic } from './source-records.ts';

export interface SourceValidation {
  /** The declaration, repository-relative. */
  file: string;
  name: string;
  namespace: string;
  ok: boolean;
  /** Objects rendered, when the render succeeded. */
  objects?: number;
  diagnostics: Diagnostic[];
}

export interface SourcesValidation {
  ok: boolean;
  sources: SourceValidation[];
  /** About the sources folder as a whole. */
  diagnostics: Diagnostic[];
}

export async function validateSources(
  repositoryRoot: string,
  options: { root: string; policy: RepositoryPolicy; renderer: Renderer },
): Promise<SourcesValidation> {
  const declarations = await readDeclarations(diskReader(repositoryRoot), options.root, options.policy);
  const sources: SourceValidation[] = declarations.rejected.map((r) => ({
    file: r.file,
    name: r.name,
    namespace: r.namespace,
    ok: false,
    diagnostics: r.diagnostics,
  }));
  // A key of this run's own: digests only tell renders apart here.
  const digestKey = randomBytes(32);
  const rendered = await Promise.all(
    declarations.sources.map((d) => validateOne(d, repositoryRoot, { ...options, digestKey })),
  );
  sources.push(...rendered);
  sources.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  const ok = declarations.problems.length === 0 && sources.every((s) => s.ok);
  return { ok, sources, diagnostics: declarations.problems };
}

async function validateOne(
  d: SourceDeclaration,
  repositoryRoot: string,
  o: { policy: RepositoryPolicy; renderer: Renderer; digestKey: Uint8Array },
): Promise<SourceValidation> {
  const base = { file: d.file, name: d.name, namespace: d.namespace };
  const result = await renderSource(d, () => localCheckout(repositoryRoot), {
    renderer: o.renderer,
    policy: o.policy,
    lookupScopes: offlineScopes,
    digestKey: o.digestKey,
  });
  if (result.kind === 'failed')
    return { ...base, ok: false, diagnostics: [renderDiagnostic(result.failure, d.file)] };
  if (result.kind === 'refused') {
    const diagnostics: Diagnostic[] = result.refusals.map((r) => ({
      code: 'object-not-allowed',
      file: d.file,
      message: r.message,
    }));
    if (result.more > 0)
      diagnostics.push({
        code: 'object-not-allowed',
        file: d.file,
        message: `… and ${result.more} more objects refused`,
      });
    return { ...base, ok: false, diagnostics };
  }
  // Its first apply: every object new, so the bounds of one transaction apply as to the largest commit.
  const plan = changesForRender({
    objects: result.objects,
    inventory: [],
    prune: false,
    digestKey: o.digestKey,
  });
  if (plan.kind === 'refused')
    return {
      ...base,
      ok: false,
      diagnostics: [{ code: 'object-not-allowed', file: d.file, message: plan.message }],
    };
  return { ...base, ok: true, objects: result.objects.length, diagnostics: [] };
}

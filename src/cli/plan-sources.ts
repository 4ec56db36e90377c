/**
 * The sources side of `janus plan --base <rev>` (docs/sources.md, "Where people look"): every
 * source declared at the base or the head commit of the local repository, read with the
 * declaration reader `janus run` uses and rendered at both commits from Git's object store (as
 * `janus run` writes a commit: checkoutCommit) through one Renderer, with the same sandbox, bounds
 * and policy; each source whose render the pull request changes becomes the Transaction the merge
 * would make (decideSourcePlan), whose changes are then dry-run as a directory's are
 * (planTransaction: as the source's ServiceAccount, under the source's field manager). A source's
 * SOPS files are decrypted for both renders as `janus run` decrypts them, with the age keys read
 * as the identity the plan runs as; its objects that `janus run` keeps encrypted are in the
 * planned Transaction encrypted, decrypted for their dry run as a directory's SOPS changes are;
 * and every value decrypted at either commit is redacted from all the plan says of the source.
 */
import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { API_VERSION, type InventoryEntry, SOURCE_KIND, type Source } from '../api/v1alpha1/index.ts';
import { AgeKeysError, readAgeKeys } from '../changes/age-keys.ts';
import { ObjectStore } from '../git/object-store.ts';
import type { RepositoryPolicy } from '../gitops/policy.ts';
import { commitReader } from '../gitops/tree-reader.ts';
import { isForbidden, isNotFound } from '../kube/errors.ts';
import { type Objects, UnknownKindError } from '../kube/resources.ts';
import { type Checkout, checkoutCommit } from '../render/checkout.ts';
import type { DecryptedInput } from '../render/decrypt-inputs.ts';
import { Renderer } from '../render/renderer.ts';
import { readDeclarations, type SourceDeclaration } from '../sources/declaration.ts';
import { offlineScopes, renderSource, type SourceRenderContext } from '../sources/render-source.ts';
import { discoveredScopes } from '../sources/source-api.ts';
import { sourceDecryption } from '../sources/source-keys.ts';
import {
  decideSourcePlan,
  type SourcePlanDecision,
  type SourceSide,
  sealedSourcePlan,
} from '../sources/source-plan.ts';
import { transactionNames } from '../sources/source-transaction.ts';
import { UsageError } from './command.ts';
import { type PlanOptions, planIdentity, planTransaction } from './plan-changes.ts';
import { invalidDirectory, redactedPlan, type SourcePlanInfo, type TransactionPlan } from './plan-view.ts';
import type { RenderSettings } from './render-settings.ts';

export interface SourcesToPlan {
  /** The repository's working copy (it holds `.git`). */
  repository: string;
  base: string;
  head: string;
  root: string;
  policy: RepositoryPolicy;
}

/**
 * Every source the pull request changes, planned (`janus plan --base`), and what to tell the
 * person besides: a sources folder refused as a whole is a plan of its own with its problems.
 */
export async function planPullRequestSources(o: {
  sources: SourcesToPlan;
  render: RenderSettings;
  /** The person's client (discovery, the Source in the cluster); none offline. */
  objects: Objects | undefined;
  plan: PlanOptions | undefined;
}): Promise<{ plans: TransactionPlan[]; notes: string[] }> {
  const renderer = new Renderer({ tools: o.render.tools, limits: o.render.limits });
  try {
    const rendered = await renderSourcesAtBoth(o.sources, renderer, o.objects, o.plan);
    const plans = await planSources(rendered, {
      repository: o.sources.repository,
      branch: o.sources.head,
      objects: o.objects,
      plan: o.plan,
    });
    const notes =
      plans.length === 0 && rendered.problems.length === 0
        ? [`no source's render changes from ${rendered.base.slice(0, 7)} to ${rendered.head.slice(0, 7)}`]
        : [];
    if (rendered.problems.length > 0) {
      // The folder as a whole is refused (too many files): janus run reads no source of it.
      const folder = invalidDirectory(o.sources.root, '', o.sources.root, []);
      plans.push({ ...folder, problems: rendered.problems });
    }
    return { plans, notes };
  } finally {
    renderer.stop();
  }
}

/** Both commits resolved, and every source of either, rendered at both. */
export interface RenderedSources {
  base: string;
  head: string;
  sources: {
    key: string;
    file: string;
    name: string;
    namespace: string;
    base: SourceSide;
    head: SourceSide;
  }[];
  /** About a sources folder as a whole (too many files): no source of that side is read. */
  problems: string[];
  /** The plan's own key of render digests. */
  digestKey: Uint8Array;
}

/**
 * Renders every source of the base and the head commit. `objects`: discovery settles the scopes
 * of kinds the render does not (offline without it, every such kind namespaced). `keys`: the
 * plan's identity, as whom each source's SOPS files are decrypted, at both commits, exactly as
 * `janus run` decrypts them (the Secret janus-sops-age of the source's namespace); none
 * (offline): they are left encrypted.
 */
export async function renderSourcesAtBoth(
  o: SourcesToPlan,
  renderer: Renderer,
  objects: Objects | undefined,
  keys?: PlanOptions | undefined,
): Promise<RenderedSources> {
  const store = new ObjectStore(await gitdirOf(o.repository));
  // The store serves one operation at a time (its caches); renders ask for checkouts at once.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => undefined);
    return next;
  };
  try {
    const base = await resolveRevision(store, o.base, '--base');
    const head = await resolveRevision(store, o.head, '--head');
    const digestKey = randomBytes(32);
    const lookupScopes = objects
      ? (kinds: Parameters<typeof discoveredScopes>[1]) => discoveredScopes(objects, kinds)
      : offlineScopes;
    const problems: string[] = [];
    const sides = new Map<string, RenderedSources['sources'][number]>();
    for (const [side, commit] of [
      ['base', base],
      ['head', head],
    ] as const) {
      const declarations = await serial(() =>
        readDeclarations(commitReader(store, commit), o.root, o.policy),
      );
      for (const p of declarations.problems)
        problems.push(`${side} ${commit.slice(0, 7)}: ${p.file}: ${p.message}`);
      const entry = (key: string, file: string, name: string, namespace: string) => {
        const found = sides.get(key);
        if (found) return found;
        const made = { key, file, name, namespace, base: ABSENT, head: ABSENT };
        sides.set(key, made);
        return made;
      };
      for (const r of declarations.rejected)
        entry(`${r.namespace}/${r.name}`, r.file, r.name, r.namespace)[side] = {
          kind: 'rejected',
          file: r.file,
          diagnostics: r.diagnostics,
        };
      const context = { renderer, policy: o.policy, lookupScopes, digestKey };
      const checkout = () => serial(() => checkoutCommit(store, commit));
      await Promise.all(
        declarations.sources.map(async (d) => {
          entry(`${d.namespace}/${d.name}`, d.file, d.name, d.namespace)[side] = await renderSide(
            d,
            checkout,
            context,
            keys,
          );
        }),
      );
    }
    const sources = [...sides.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return { base, head, sources, problems, digestKey };
  } finally {
    await serial(() => store.close());
  }
}

const ABSENT: SourceSide = { kind: 'absent' };

/**
 * One source at one commit, its SOPS files decrypted with the age keys read as the plan's
 * identity (planIdentity: the source's ServiceAccount, or the person), as the transaction plan
 * reads a change's. When that identity may not read them, the render fails naming the Secret, and
 * is rendered once more with the files left encrypted: never shown, that render says whether the
 * pull request changes the source at all.
 */
async function renderSide(
  d: SourceDeclaration,
  checkout: () => Promise<Checkout>,
  context: Omit<SourceRenderContext, 'decryption'>,
  keys: PlanOptions | undefined,
): Promise<SourceSide> {
  if (!keys) return { kind: 'declared', declaration: d, render: await renderSource(d, checkout, context) };
  let unreadable = false;
  const { objects } = planIdentity(keys, d.namespace, d.spec.serviceAccountName);
  const decryption = sourceDecryption(() =>
    readAgeKeys(objects, d.namespace).catch((error: unknown) => {
      unreadable ||= error instanceof AgeKeysError;
      throw error;
    }),
  );
  const render = await renderSource(d, checkout, { ...context, decryption });
  if (render.kind !== 'failed' || !unreadable) return { kind: 'declared', declaration: d, render };
  return { kind: 'declared', declaration: d, render, undecrypted: await renderSource(d, checkout, context) };
}

/**
 * The plan of each source the pull request changes: decided, then (for a transaction) dry-run
 * change by change. `objects` is the person's client: it reads the Source in the cluster.
 */
export async function planSources(
  rendered: RenderedSources,
  context: {
    repository: string;
    branch: string;
    objects: Objects | undefined;
    plan: PlanOptions | undefined;
  },
): Promise<TransactionPlan[]> {
  const plans: TransactionPlan[] = [];
  for (const s of rendered.sources) {
    const input = {
      base: s.base,
      head: s.head,
      headCommit: rendered.head,
      digestKey: rendered.digestKey,
      repository: context.repository,
      branch: context.branch,
    };
    if (decideSourcePlan(input).verdict === 'unchanged') continue;
    const cluster = context.objects
      ? await clusterInventory(context.objects, s.namespace, s.name)
      : undefined;
    const decision = await sealedSourcePlan(
      decideSourcePlan({ ...input, clusterInventory: cluster }),
      s.head.kind === 'declared' && s.head.render.kind === 'rendered' ? s.head.render.sealed : undefined,
    );
    const info: SourcePlanInfo = {
      name: s.name,
      file: s.file,
      base: rendered.base,
      head: rendered.head,
      verdict: decision.verdict as SourcePlanInfo['verdict'],
      left: 'left' in decision ? decision.left : [],
      comparedWith: cluster ? 'cluster' : 'base',
    };
    const plan = await planOf(decision, s, info, rendered.head, context.plan);
    plans.push(redactedPlan(plan, [...decryptedAt(s.base), ...decryptedAt(s.head)]));
  }
  return plans;
}

/** What a side's render decrypted: its values are redacted from the plan, whichever side. */
function decryptedAt(side: SourceSide): readonly DecryptedInput[] {
  return side.kind === 'declared' && side.render.kind === 'rendered' ? (side.render.decrypted ?? []) : [];
}

async function planOf(
  decision: SourcePlanDecision,
  s: RenderedSources['sources'][number],
  info: SourcePlanInfo,
  head: string,
  options: PlanOptions | undefined,
): Promise<TransactionPlan> {
  const name = transactionNames(s.name, head)[0] as string;
  const base = { path: s.file, namespace: s.namespace, name, changes: [], problems: [], source: info };
  if (decision.verdict === 'transaction') {
    if (!options)
      return { ...base, problems: ['no cluster to dry-run the changes against (a kubeconfig is needed)'] };
    return { ...(await planTransaction(decision.transaction, s.file, options)), source: info };
  }
  return 'problems' in decision ? { ...base, problems: decision.problems } : base;
}

/** The Source's inventory in the cluster; undefined when there is no Source or it may not be read. */
async function clusterInventory(
  objects: Objects,
  namespace: string,
  name: string,
): Promise<InventoryEntry[] | undefined> {
  try {
    const source = await objects.find<Source>({
      apiVersion: API_VERSION,
      kind: SOURCE_KIND,
      namespace,
      name,
    });
    // A Source that never committed a transaction holds nothing yet: every object is new.
    return source ? (source.status?.inventory ?? []) : undefined;
  } catch (error) {
    // No Source CRD in the cluster, or a person who may not read Sources: compared with the base.
    if (isForbidden(error) || isNotFound(error) || error instanceof UnknownKindError) return undefined;
    throw error;
  }
}

async function gitdirOf(repository: string): Promise<string> {
  const gitdir = join(resolve(repository), '.git');
  if (!(await stat(gitdir).catch(() => undefined))?.isDirectory())
    throw new UsageError(
      `${repository}: no .git folder: --base plans sources from the repository's commits, so plan its root (a clone, not a worktree)`,
    );
  return gitdir;
}

/** A full commit id, or a ref (a branch, `origin/main`, a tag, HEAD), as a commit this clone has. */
async function resolveRevision(store: ObjectStore, revision: string, flag: string): Promise<string> {
  const oid = /^[0-9a-f]{40}$/.test(revision) ? revision : await store.resolveRef(revision);
  const commit = oid && (await store.findCommit(oid));
  if (!commit)
    throw new UsageError(
      `${flag} ${revision}: no such commit in this clone (a full commit id or a ref; a shallow CI clone needs the base fetched, e.g. actions/checkout with fetch-depth: 0)`,
    );
  return commit.oid;
}

/**
 * What `janus plan` says of one source of a pull request (docs/sources.md, "Where people look"):
 * the source rendered at the base and at the head, each by renderSource (the sandbox, the bounds
 * and the policy `janus run` applies), and, when the head's render differs from the base's, the
 * Transaction the merge would make: changesForRender against what the source holds, then
 * sourceTransaction, the controller's own two steps. A source whose render the pull request does
 * not change is not planned (the controller makes no transaction of it either). Pure: the CLI
 * renders, reads the cluster's Source and dry-runs the Transaction's changes (src/cli/plan-sources.ts).
 */
import type { InventoryEntry, Transaction } from '../api/v1alpha1/index.ts';
import { type Diagnostic, formatDiagnostic } from '../yaml/diagnostic.ts';
import { changesForRender } from './changes-for-render.ts';
import type { SourceDeclaration } from './declaration.ts';
import { identityKey } from './inventory.ts';
import type { SourceRender } from './render-source.ts';
import { type Sealed, sealChanges } from './sealed-objects.ts';
import { renderDiagnostic } from './source-records.ts';
import { MAX_TRANSACTION_BYTES, sourceTransaction, transactionNames } from './source-transaction.ts';

/** One side of the pull request: the declaration there (valid or not) and, when valid, its render. */
export type SourceSide =
  | { kind: 'absent' }
  | { kind: 'rejected'; file: string; diagnostics: readonly Diagnostic[] }
  | {
      kind: 'declared';
      declaration: SourceDeclaration;
      render: SourceRender;
      /**
       * When the render failed for want of the age keys (the plan's identity may not read them):
       * the render with its SOPS files left encrypted, never shown, which tells whether the pull
       * request changes the source (its encrypted files, or anything else).
       */
      undecrypted?: SourceRender | undefined;
    };

export interface SourcePlanInput {
  base: SourceSide;
  head: SourceSide;
  /** The head commit (40 hex): the transaction is named after it. */
  headCommit: string;
  /**
   * The inventory of the Source in the cluster, when it exists: which objects the source applied
   * (the controller prunes against it); its digests are the controller's and never match these.
   */
  clusterInventory?: readonly InventoryEntry[] | undefined;
  /** The plan's own key of render digests (both sides are rendered under it). */
  digestKey: string | Uint8Array;
  /** Provenance for the planned Transaction (its stamp is never checked). */
  repository: string;
  branch: string;
}

export type SourcePlanDecision =
  /** The pull request does not change what the source renders (or declares nothing of it). */
  | { verdict: 'unchanged' }
  /** Declared at the base, not at the head: its Source is deleted, what it applied stays. */
  | { verdict: 'removed' }
  /** The head's declaration is invalid, or its render failed or was refused: nothing would be applied. */
  | { verdict: 'rejected' | 'render-failed' | 'refused'; problems: string[] }
  /** The render changed, but nothing would be applied or deleted. */
  | { verdict: 'no-transaction'; left: string[] }
  | { verdict: 'transaction'; transaction: Transaction; left: string[] };

export function decideSourcePlan(input: SourcePlanInput): SourcePlanDecision {
  const { base, head } = input;
  if (head.kind === 'absent')
    return base.kind === 'absent' ? { verdict: 'unchanged' } : { verdict: 'removed' };
  if (sameOutcome(base, head)) return { verdict: 'unchanged' };
  if (head.kind === 'rejected')
    return { verdict: 'rejected', problems: head.diagnostics.map(formatDiagnostic) };
  const { declaration: d, render } = head;
  if (render.kind === 'failed')
    return {
      verdict: 'render-failed',
      problems: [formatDiagnostic(renderDiagnostic(render.failure, d.file))],
    };
  if (render.kind === 'refused') return { verdict: 'refused', problems: refusalLines(render) };
  const plan = changesForRender({
    objects: render.objects,
    inventory: inventoryToCompare(baseEntries(base), input.clusterInventory),
    prune: d.spec.prune ?? false,
    digestKey: input.digestKey,
  });
  if (plan.kind === 'refused') return { verdict: 'refused', problems: [plan.message] };
  const left = plan.left.map((l) => l.message);
  if (plan.kind === 'unchanged') return { verdict: 'no-transaction', left };
  const transaction = sourceTransaction({
    source: d,
    name: transactionNames(d.name, input.headCommit)[0] as string,
    file: d.file,
    repository: input.repository,
    branch: input.branch,
    commit: input.headCommit,
    sequence: 0,
    changes: plan.changes,
    renderDigest: render.digest,
    left: plan.left,
    stampKey: 'plan',
  });
  const oversized = sizeProblem(transaction);
  if (oversized) return { verdict: 'refused', problems: [oversized] };
  return { verdict: 'transaction', transaction, left };
}

/**
 * The decision with its Transaction as `janus run` would create it from a render that decrypted
 * SOPS files (`sealed`): each object of a kind SOPS content may be applied to kept encrypted, as
 * `sopsContent` to the namespace keys' recipients (sealChanges), and so decrypted for its dry run as the
 * controller decrypts it, and sized as the API server would take it.
 */
export async function sealedSourcePlan(
  decision: SourcePlanDecision,
  sealed: Sealed | undefined,
): Promise<SourcePlanDecision> {
  if (decision.verdict !== 'transaction' || !sealed) return decision;
  const { transaction } = decision;
  const changes = await sealChanges(transaction.spec.changes, sealed);
  const withSealed = { ...transaction, spec: { ...transaction.spec, changes } };
  const oversized = sizeProblem(withSealed);
  if (oversized) return { verdict: 'refused', problems: [oversized] };
  return { ...decision, transaction: withSealed };
}

function sizeProblem(transaction: Transaction): string | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(transaction));
  if (bytes <= MAX_TRANSACTION_BYTES) return undefined;
  return `its Transaction would be ${bytes} bytes, more than the ${MAX_TRANSACTION_BYTES} one API object may take: split the source, or its commit (${transaction.spec.changes.length} changes)`;
}

/**
 * What the head's render is compared with. The cluster's inventory, when the Source exists, says
 * which objects the source holds (and which it may not prune); the base's render says what they
 * hold, under the plan's key: an object the inventory lists and the base renders alike is
 * unchanged, one the inventory does not list is new (its last commit did not apply it), one the
 * base does not render is applied again. Without a Source in the cluster, the base's render is
 * what the source holds (its first commit, or a cluster the plan cannot read).
 */
export function inventoryToCompare(
  base: readonly InventoryEntry[],
  cluster: readonly InventoryEntry[] | undefined,
): InventoryEntry[] {
  if (!cluster) return [...base];
  const rendered = new Map(base.map((e) => [identityKey(e), e]));
  return cluster.map((e) => {
    const digest = rendered.get(identityKey(e))?.digest ?? '';
    return { ...e, digest };
  });
}

function baseEntries(base: SourceSide): readonly InventoryEntry[] {
  return base.kind === 'declared' && base.render.kind === 'rendered' ? base.render.entries : [];
}

/** Whether both sides render alike (the same objects, or the same failure): nothing to plan. */
function sameOutcome(base: SourceSide, head: SourceSide): boolean {
  if (base.kind !== head.kind) return false;
  if (base.kind === 'rejected' && head.kind === 'rejected')
    return JSON.stringify(base.diagnostics) === JSON.stringify(head.diagnostics);
  if (base.kind !== 'declared' || head.kind !== 'declared') return base.kind === head.kind;
  // Both failed for want of the keys: alike when they render alike encrypted.
  if (base.undecrypted && head.undecrypted)
    return (
      outcomeKey(base.render) === outcomeKey(head.render) &&
      outcomeKey(base.undecrypted) === outcomeKey(head.undecrypted)
    );
  return outcomeKey(base.render) === outcomeKey(head.render);
}

function outcomeKey(render: SourceRender): string {
  switch (render.kind) {
    case 'rendered':
      return `rendered ${render.digest}`;
    case 'failed':
      return `failed ${JSON.stringify(render.failure)}`;
    case 'refused':
      return `refused ${JSON.stringify(render.refusals)} ${render.more}`;
  }
}

function refusalLines(render: Extract<SourceRender, { kind: 'refused' }>): string[] {
  const lines = render.refusals.map((r) => r.message);
  if (render.more > 0) lines.push(`… and ${render.more} more objects refused`);
  return lines;
}

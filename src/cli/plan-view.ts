/** What `janus plan` reports: per change, what would happen and the diff; totals; the exit status. Pure. */
import type { ChangeType } from '../api/v1alpha1/index.ts';
import { type Diagnostic, formatDiagnostic } from '../gitops/index.ts';
import type { KubeObject } from '../kube/resources.ts';
import { type DecryptedInput, decryptedRedactor } from '../render/decrypt-inputs.ts';
import { ANNOTATION_APPLIED_BY } from '../saga/targets.ts';
import { htmlText, markdownCode } from '../text/markdown.ts';
import { printable } from '../text/printable.ts';
import { diffObjects, isSecret, VALUES_NOT_COMPARED } from '../yaml/manifest-diff.ts';

export type PlanAction = 'create' | 'update' | 'delete' | 'unchanged' | 'error';

export interface PlannedChange {
  index: number;
  type: ChangeType;
  /** "v1 ConfigMap shop/app-config". */
  target: string;
  action: PlanAction;
  /** Unified diff from the current object to the planned one; '' when nothing changes. */
  diff: string;
  error?: string;
  /** Why the controller would refuse it, in its status's words (TargetExists, DryRunFailed, …). */
  reason?: string;
  /** NOT_COMPARED_NOTE: the target's content is secret and exists on both sides. */
  note?: string;
}

/**
 * Said of a change whose target's content is secret (a Secret, or a kind --sops-kinds allows) and
 * exists on both sides. Its values are masked the same whether they change or not, and the change
 * is an update even when the diff is empty: a verdict that told them apart would let whoever can
 * make a plan compare a guess with the live value and read the answer in the pull request.
 */
export const NOT_COMPARED_NOTE = `${VALUES_NOT_COMPARED} with the current ones: shown as an update whether or not a value would change`;

const NOT_COMPARED_SHORT = 'values not compared';

/** " (values not compared)" after the verdict of a change with NOT_COMPARED_NOTE. */
const notCompared = (change: PlannedChange) => (change.note ? ` (${NOT_COMPARED_SHORT})` : '');

export interface TransactionPlan {
  /** Repository-relative directory. */
  path: string;
  namespace: string;
  name: string;
  /** Who the dry runs ran as. */
  identity?: string;
  changes: PlannedChange[];
  /** Why the directory could not be planned at all (invalid, missing ServiceAccount). */
  problems: string[];
  /** When this is a source's transaction: which source, which commits, and what the render came to. */
  source?: SourcePlanInfo;
}

/** A source of the pull request (docs/sources.md): rendered at base and head, its render changed. */
export interface SourcePlanInfo {
  /** The Source's name (its namespace is the plan's). */
  name: string;
  /** Its declaration, repository-relative. */
  file: string;
  /** The commits, in full. */
  base: string;
  head: string;
  verdict: 'transaction' | 'no-transaction' | 'removed' | 'rejected' | 'render-failed' | 'refused';
  /** What the render drops and the transaction leaves in the cluster, and why. */
  left: string[];
  /** What the head's render was compared with: the Source's inventory in the cluster, or the base's render. */
  comparedWith: 'cluster' | 'base';
}

/**
 * Compares what exists with what the dry run returned. `secretContent`: the target's kind is one
 * whose content is secret (a Secret, or a kind --sops-kinds allows), whether the change is
 * SOPS-encrypted or plain: all but its identity masked on both sides, and never compared (a
 * Secret's values are, whatever the caller says).
 */
export function planChange(
  index: number,
  type: ChangeType,
  target: string,
  current: KubeObject | undefined,
  planned: KubeObject | undefined,
  secretContent = false,
): PlannedChange {
  const labels = {
    from: current ? `current ${target}` : `current ${target} (absent)`,
    to: planned
      ? `planned ${target} (change ${index}: ${type})`
      : `planned ${target} (deleted by change ${index})`,
  };
  const diff = diffObjects(current, planned, labels, { maskContent: secretContent });
  const secret = secretContent || isSecret(current) || isSecret(planned);
  const uncompared = secret && current !== undefined && planned !== undefined;
  const action: PlanAction =
    planned && !current
      ? 'create'
      : current && !planned
        ? 'delete'
        : diff || uncompared
          ? 'update'
          : 'unchanged';
  return { index, type, target, action, diff, ...(uncompared && { note: NOT_COMPARED_NOTE }) };
}

/**
 * The dry run sends the applied-by stamp the commit adds (so admission and size limits judge it
 * as they will), but its value names a Transaction that does not exist yet: the diff shows the
 * target's own stamp instead, unchanged.
 */
export function withCurrentStamp(
  planned: KubeObject | undefined,
  current: KubeObject | undefined,
): KubeObject | undefined {
  if (!planned) return planned;
  const { [ANNOTATION_APPLIED_BY]: _stamp, ...annotations } = planned.metadata.annotations ?? {};
  const own = current?.metadata.annotations?.[ANNOTATION_APPLIED_BY];
  if (own !== undefined) annotations[ANNOTATION_APPLIED_BY] = own;
  const { annotations: _all, ...metadata } = planned.metadata;
  return {
    ...planned,
    metadata: Object.keys(annotations).length > 0 ? { ...metadata, annotations } : metadata,
  };
}

export function failedChange(
  index: number,
  type: ChangeType,
  target: string,
  error: string,
  reason?: string,
): PlannedChange {
  return { index, type, target, action: 'error', diff: '', error, ...(reason && { reason }) };
}

export function invalidDirectory(
  path: string,
  namespace: string,
  name: string,
  diagnostics: readonly Diagnostic[],
): TransactionPlan {
  return { path, namespace, name, changes: [], problems: diagnostics.map(formatDiagnostic) };
}

/**
 * A source's plan whose render decrypted SOPS files, with every decrypted value (redactDecrypted:
 * as it is, escaped, base64, line by line) replaced in all it shows that the render and the dry
 * run made: targets, diffs, refusals, problems, what is left. A Secret's values are masked in its
 * diff already; what else may quote one is the pull request's to choose (a label, an annotation,
 * a name, a kustomize or API server message), so nothing of that is trusted.
 */
export function redactedPlan(plan: TransactionPlan, decrypted: readonly DecryptedInput[]): TransactionPlan {
  if (decrypted.length === 0) return plan;
  const redact = decryptedRedactor(decrypted);
  return {
    ...plan,
    problems: plan.problems.map(redact),
    changes: plan.changes.map((c) => ({
      ...c,
      target: redact(c.target),
      diff: redact(c.diff),
      ...(c.error !== undefined && { error: redact(c.error) }),
    })),
    ...(plan.source && { source: { ...plan.source, left: plan.source.left.map(redact) } }),
  };
}

/** 0 nothing would change, 1 something would, 2 something is wrong (as `terraform plan -detailed-exitcode`). */
export function planExitCode(plans: readonly TransactionPlan[]): 0 | 1 | 2 {
  const changes = plans.flatMap((p) => p.changes);
  if (plans.some((p) => p.problems.length > 0) || changes.some((c) => c.action === 'error')) return 2;
  if (plans.some((p) => p.source?.verdict === 'removed')) return 1;
  return changes.some((c) => c.action !== 'unchanged') ? 1 : 0;
}

function counts(changes: readonly PlannedChange[]): string {
  const n = (action: PlanAction) => changes.filter((c) => c.action === action).length;
  const parts = [
    `${n('create')} to create`,
    `${n('update')} to update`,
    `${n('delete')} to delete`,
    `${n('unchanged')} unchanged`,
  ];
  if (n('error') > 0) parts.push(`${n('error')} refused`);
  return parts.join(', ');
}

const ACTION_TEXT: Record<PlanAction, string> = {
  create: 'would be created',
  update: 'would change',
  delete: 'would be deleted',
  unchanged: 'no change',
  error: 'REFUSED',
};

/** A source's transaction deletes only what it prunes. */
function actionText(plan: TransactionPlan, action: PlanAction): string {
  return plan.source && action === 'delete' ? 'would be pruned' : ACTION_TEXT[action];
}

const SOURCE_VERDICT_TEXT: Record<SourcePlanInfo['verdict'], string> = {
  transaction: 'the merge would make this transaction',
  'no-transaction': 'its render changes, but nothing would be applied or pruned: no transaction',
  removed:
    'its declaration is removed: the Source would be deleted, and what it applied stays in the cluster',
  rejected: 'its declaration would be rejected',
  'render-failed': 'its render would fail: nothing would be applied',
  refused: 'its render would be refused: nothing would be applied',
};

/** "Source shop/web (sources/web.yaml), 3f2a9c1 → 9b8e7d6: …" and what the comparison was with. */
function sourceHeading(plan: TransactionPlan, source: SourcePlanInfo): string {
  return `Source ${plan.namespace}/${source.name} (${source.file}), ${source.base.slice(0, 7)} → ${source.head.slice(0, 7)}: ${SOURCE_VERDICT_TEXT[source.verdict]}`;
}

function comparedWithText(source: SourcePlanInfo): string {
  return source.comparedWith === 'cluster'
    ? "compared with the objects the Source holds in the cluster (its inventory) and the base's render"
    : "compared with the base's render (no Source in the cluster to read)";
}

/** "<namespace>/<name>"; a plan of no namespace (the sources folder as a whole) is its name. */
const idOf = (plan: TransactionPlan) => (plan.namespace ? `${plan.namespace}/${plan.name}` : plan.name);

/** A tool's message of several lines stays under its heading: every line indented. */
const indented = (text: string) => `  ${text.replace(/\n/g, '\n    ')}`;

/** What `janus plan` prints on the terminal; printable, since paths, names and diffs are the pusher's. */
export function renderPlan(plan: TransactionPlan): string {
  return printable(renderPlanText(plan), { keepTabs: true });
}

function renderPlanText(plan: TransactionPlan): string {
  const id = idOf(plan);
  const source = plan.source;
  const lines: string[] = source ? [sourceHeading(plan, source)] : [];
  if (source && source.verdict !== 'transaction') {
    lines.push(...[...plan.problems, ...source.left].map(indented), '');
    return `${lines.join('\n')}\n`;
  }
  lines.push(`Transaction ${id} (${plan.path})${plan.identity ? `, dry run as ${plan.identity}` : ''}`);
  if (source) lines.push(`  ${comparedWithText(source)}`);
  if (plan.problems.length > 0) {
    lines.push('  Cannot be planned:', ...plan.problems.map((p) => `  ${p}`), '');
    return `${lines.join('\n')}\n`;
  }
  for (const c of plan.changes) {
    lines.push('', `[${c.index}] ${c.type} ${c.target}: ${actionText(plan, c.action)}${notCompared(c)}`);
    if (c.error) lines.push(`    ${c.error}`);
    if (c.note) lines.push(`    ${c.note}`);
    if (c.diff) lines.push(c.diff.replace(/\n$/, ''));
  }
  if (source && source.left.length > 0) lines.push('', 'Left in the cluster:', ...source.left.map(indented));
  lines.push('', `${id}: ${counts(plan.changes)}`, '');
  return `${lines.join('\n')}\n`;
}

/** All the diffs, nothing else: `janus plan -o diff` for posting in a pull request. */
export function renderDiffs(plans: readonly TransactionPlan[]): string {
  return printable(plans.flatMap((p) => p.changes.map((c) => c.diff).filter(Boolean)).join(''), {
    keepTabs: true,
  });
}

export const PLAN_NOTE =
  'Each change is dry-run on its own against the current state, as the prepare step does; ' +
  'a change that depends on an earlier change of the same transaction is planned without it.';

/** A GFM table cell: its `|` escaped, also inside a code span (the table is split first). */
const cell = (text: string) => text.replaceAll('|', '\\|');

/** The longest run of backticks in `text`, plus one: a fence the diff cannot close. */
function fenceFor(text: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  return '`'.repeat(longest + 1);
}

/**
 * A pull-request review comment (GitHub and GitLab flavoured Markdown): a summary, a table per
 * transaction with each change's verdict, what would be refused and why, and each diff folded.
 * Every foreign string (the pull request's paths, names and targets, diagnostics quoting its files,
 * the API server's errors) is a code span, or entities inside the HTML of `<details>`: shown as
 * text, never a link, an image, a mention or markup.
 */
export function renderMarkdown(plans: readonly TransactionPlan[]): string {
  const all = plans.flatMap((p) => p.changes);
  const broken = plans.filter((p) => p.problems.length > 0).length;
  const sources = plans.filter((p) => p.source).length;
  const verdict =
    planExitCode(plans) === 2
      ? '❌ would be refused'
      : planExitCode(plans) === 1
        ? '📝 would change'
        : '✅ no change';
  const out: string[] = [
    `### Janus plan: ${verdict}`,
    '',
    `${plans.filter((p) => !p.source).length} transaction(s)${sources > 0 ? `, ${sources} source(s)` : ''}: ${counts(all)}${broken > 0 ? `; ${broken} cannot be planned` : ''}.`,
    '',
  ];
  for (const plan of plans) out.push(...markdownPlan(plan));
  out.push(`<sub>${PLAN_NOTE}</sub>`, '');
  return out.join('\n');
}

/** One transaction's (or one source's) part of the comment. */
function markdownPlan(plan: TransactionPlan): string[] {
  const id = idOf(plan);
  const as = plan.identity ? `, dry run as ${markdownCode(plan.identity)}` : '';
  const source = plan.source;
  const out: string[] = [];
  if (source) {
    const transaction =
      source.verdict === 'transaction' ? `: ${markdownCode(id)}${as}; ${comparedWithText(source)}` : '';
    out.push(
      `#### Source ${markdownCode(`${plan.namespace}/${source.name}`)} (${markdownCode(source.file)}), ${markdownCode(source.base.slice(0, 7))} → ${markdownCode(source.head.slice(0, 7))}`,
      '',
      `${SOURCE_VERDICT_TEXT[source.verdict]}${transaction}.`,
      '',
    );
    if (source.left.length > 0)
      out.push('**Left in the cluster:**', '', ...source.left.map((l) => `- ${markdownCode(l)}`), '');
    if (source.verdict !== 'transaction') {
      if (plan.problems.length > 0) out.push(...plan.problems.map((p) => `- ${markdownCode(p)}`), '');
      return out;
    }
  } else {
    out.push(`#### ${markdownCode(id)} (${markdownCode(plan.path)})${as}`, '');
  }
  if (plan.problems.length > 0) {
    out.push('**Cannot be planned:**', '', ...plan.problems.map((p) => `- ${markdownCode(p)}`), '');
    return out;
  }
  out.push('| # | change | target | verdict |', '|---|---|---|---|');
  for (const c of plan.changes) {
    out.push(
      `| ${c.index} | ${c.type} | ${cell(markdownCode(c.target))} | ${c.action === 'error' ? '❌ refused' : actionText(plan, c.action)}${notCompared(c)} |`,
    );
  }
  out.push('');
  for (const c of plan.changes.filter((x) => x.error))
    out.push(`**Change ${c.index} would be refused:** ${markdownCode(c.error ?? '')}`, '');
  if (plan.changes.some((c) => c.note))
    out.push(`<sub>${NOT_COMPARED_SHORT}: ${NOT_COMPARED_NOTE}.</sub>`, '');
  for (const c of plan.changes.filter((x) => x.diff)) {
    const diff = printable(c.diff, { keepTabs: true });
    const fence = fenceFor(diff);
    out.push(
      `<details><summary>[${c.index}] ${c.type} ${htmlText(c.target)}: ${actionText(plan, c.action)}</summary>`,
      '',
      `${fence}diff`,
      diff.replace(/\n$/, ''),
      fence,
      '',
      '</details>',
      '',
    );
  }
  return out;
}

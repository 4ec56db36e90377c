/** What `janus status` prints: the Transaction table, and one Transaction in detail. Pure. */
import type { AnalysisCheckStatus, Condition, ItemStatus, Transaction } from '../api/v1alpha1/index.ts';
import type { ShownEvent } from '../kube/events.ts';
import { changeOutcome, sourceCommit } from '../results/index.ts';
import { bakeCountdown } from '../saga/bake-window.ts';
import { isCorrectionOf } from '../sources/drift-decision.ts';
import { printable } from '../text/printable.ts';
import { ageOf, renderTable, truncate } from './table.ts';

/** A core/v1 Event, as much of it as `janus status <name>` shows. */
export type TransactionEvent = ShownEvent;

export const TABLE_HEADER = ['NAMESPACE', 'NAME', 'PHASE', 'CHANGES', 'AGE', 'REASON'] as const;

const phaseOf = (txn: Transaction) => txn.status?.phase ?? 'Pending';
const condition = (txn: Transaction, type: string): Condition | undefined =>
  txn.status?.conditions?.find((c) => c.type === type);

/** "2/3": committed changes over all changes. */
export function progress(txn: Transaction): string {
  if (txn.status?.progress) return txn.status.progress;
  const committed = (txn.status?.items ?? []).filter((i) => i.committed).length;
  return `${committed}/${txn.spec.changes.length}`;
}

/** The row of the table: printable, since whoever can write the status writes some of it. */
export function transactionRow(txn: Transaction, nowMs: number): string[] {
  return [
    txn.metadata.namespace ?? '',
    txn.metadata.name,
    phaseOf(txn),
    progress(txn),
    ageOf(txn.metadata.creationTimestamp, nowMs),
    reasonOf(txn, nowMs),
  ].map((cell) => printable(cell));
}

/** The Ready condition's reason; in the bake window, with its countdown: "Baking (stable for 12s of 30s)". */
function reasonOf(txn: Transaction, nowMs: number): string {
  const reason = condition(txn, 'Ready')?.reason ?? '';
  const countdown = bakeCountdown(txn, nowMs);
  return countdown ? `${reason} (${countdown})` : reason;
}

export function renderTransactionTable(txns: readonly Transaction[], nowMs: number, scope: string): string {
  if (txns.length === 0) return `No Transactions found ${scope}.\n`;
  return renderTable(
    TABLE_HEADER,
    txns.map((t) => transactionRow(t, nowMs)),
  );
}

/** The target of change `index` as the status names it, or as the spec does before there is a status. */
function targetOf(txn: Transaction, index: number, item: ItemStatus | undefined): string {
  if (item?.target) return item.target;
  const target = txn.spec.changes[index]?.target;
  if (!target) return '';
  const namespace = target.namespace ?? txn.metadata.namespace;
  return `${target.apiVersion} ${target.kind} ${namespace ? `${namespace}/` : ''}${target.name}`;
}

function changeRows(txn: Transaction): string[][] {
  return txn.spec.changes.map((change, index) => {
    const item = txn.status?.items?.[index];
    return [
      String(index),
      change.type,
      targetOf(txn, index, item),
      changeOutcome(item),
      item?.health ? `${item.health.status} (${item.health.reason})` : '',
      truncate(item?.error || (item?.health?.status !== 'Current' ? (item?.health?.message ?? '') : ''), 100),
    ];
  });
}

function field(label: string, value: string | undefined): string[] {
  return value ? [`${`${label}:`.padEnd(16)}${value}`] : [];
}

const when = (timestamp: string | undefined, nowMs: number) =>
  timestamp ? `${timestamp} (${ageOf(timestamp, nowMs)} ago)` : undefined;

/**
 * "Commit: Healthy after 14s", "Rollback: waiting, gives up at …", or in the bake window
 * "Commit: baking, stable for 12s of 30s (since …), a regression rolls back".
 */
function healthLine(txn: Transaction, nowMs: number): string | undefined {
  const h = txn.status?.health;
  if (!h?.startedAt) return undefined;
  const countdown = bakeCountdown(txn, nowMs);
  if (countdown) {
    return `${h.check}: baking, ${countdown} (since ${when(h.stableSince, nowMs)}); a regression rolls back`;
  }
  if (!h.completedAt) return `${h.check}: waiting, gives up at ${when(h.deadline, nowMs) ?? 'its deadline'}`;
  const seconds = Math.round((Date.parse(h.completedAt) - Date.parse(h.startedAt)) / 1000);
  return `${h.check}: ${h.result} after ${seconds}s`;
}

/**
 * One analysis check: "error-rate  4  1  Failed 0.31 (12s ago): …  in 8s". The last measurement
 * with its message, since that is what tells why a check fails or cannot measure.
 */
function analysisRow(check: AnalysisCheckStatus, nowMs: number): string[] {
  const last = check.measurements?.at(-1);
  const lastText = last
    ? `${last.phase}${last.value === undefined ? '' : ` ${last.value}`} (${ageOf(last.at, nowMs)} ago)${last.phase === 'Passed' ? '' : `: ${last.message}`}`
    : '';
  const next = check.nextAt ? Date.parse(check.nextAt) - nowMs : Number.NaN;
  return [
    check.name,
    String(check.measured),
    String(check.failed),
    truncate(lastText, 100),
    Number.isFinite(next) ? (next > 0 ? `in ${Math.ceil(next / 1000)}s` : 'due') : '',
  ];
}

/** What the reader can do next, given the phase. */
export function nextStepHint(txn: Transaction): string | undefined {
  const ref = `${txn.metadata.name} -n ${txn.metadata.namespace}`;
  const items = txn.status?.items ?? [];
  switch (phaseOf(txn)) {
    case 'Committed':
      return `To undo it: janus rollback ${ref} --reason "<why>"`;
    case 'Failed':
      if (items.some((i) => i.conflict)) {
        return `Some targets were changed by someone else after commit. Inspect and restore them: janus recover ${ref}`;
      }
      if (items.some((i) => i.committed && !i.rolledBack)) {
        return `The rollback did not finish. Retry it: janus rollback ${ref}`;
      }
      return undefined;
    default:
      return undefined;
  }
}

/**
 * "commit 3f2a9c1 of Source shop/web": what a source's transaction applies (status, trace); for a
 * drift correction `transaction`, "a drift correction of Source shop/web (the render of commit
 * 3f2a9c1)": it puts back what that commit applied.
 */
export function sourceApplies(
  namespace: string,
  source: string,
  revision: string | undefined,
  transaction?: string,
): string {
  const commit = sourceCommit(revision);
  const of = `Source ${namespace}/${source}`;
  if (transaction !== undefined && isCorrectionOf(transaction, source))
    return `a drift correction of ${of}${commit ? ` (the render of commit ${commit.slice(0, 7)})` : ''}`;
  return `${commit ? `commit ${commit.slice(0, 7)}` : 'a commit'} of ${of}`;
}

export function renderTransactionDetail(
  txn: Transaction,
  events: readonly TransactionEvent[],
  nowMs: number,
): string {
  const status = txn.status ?? {};
  const ready = condition(txn, 'Ready');
  const source = status.source;
  const lines = [
    ...field('Name', txn.metadata.name),
    ...field('Namespace', txn.metadata.namespace),
    ...field('Phase', phaseOf(txn)),
    ...field(
      'Ready',
      ready && `${ready.status} (${ready.reason})${ready.message ? `: ${ready.message}` : ''}`,
    ),
    ...field('Progress', `${progress(txn)} changes committed`),
    ...field('ServiceAccount', txn.spec.serviceAccountName),
    ...field(
      'Source',
      source &&
        [source.repository, source.path, source.revision && `at ${source.revision}`]
          .filter(Boolean)
          .join(' '),
    ),
    ...field(
      'Applies',
      txn.spec.sourceRef &&
        `${sourceApplies(txn.metadata.namespace ?? '', txn.spec.sourceRef.name, source?.revision, txn.metadata.name)} (kubectl get source -n ${txn.metadata.namespace} ${txn.spec.sourceRef.name})`,
    ),
    ...field('Created', when(txn.metadata.creationTimestamp, nowMs)),
    ...field('Started', when(status.startedAt, nowMs)),
    ...field('Deadline', status.completedAt ? undefined : when(status.deadline, nowMs)),
    ...field('Completed', when(status.completedAt, nowMs)),
    ...field('Rollback store', status.rollbackRef),
    ...field('Health check', healthLine(txn, nowMs)),
    '',
    'Changes:',
    indent(renderTable(['#', 'TYPE', 'TARGET', 'OUTCOME', 'HEALTH', 'DETAIL'], changeRows(txn))),
  ];
  const analysis = status.health?.analysis ?? [];
  if (analysis.length > 0) {
    lines.push(
      `Analysis (${status.health?.check ?? 'Commit'}):`,
      indent(
        renderTable(
          ['CHECK', 'MEASURED', 'FAILED', 'LAST', 'NEXT'],
          analysis.map((a) => analysisRow(a, nowMs)),
        ),
      ),
    );
  }
  const conditions = status.conditions ?? [];
  if (conditions.length > 0) {
    lines.push(
      'Conditions:',
      indent(
        renderTable(
          ['TYPE', 'STATUS', 'REASON', 'MESSAGE'],
          conditions.map((c) => [c.type, c.status, c.reason, truncate(c.message ?? '', 100)]),
        ),
      ),
    );
  }
  if (events.length > 0) {
    lines.push(
      'Events:',
      indent(
        renderTable(
          ['AGE', 'TYPE', 'REASON', 'MESSAGE'],
          events.map((e) => [
            ageOf(e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp, nowMs),
            e.type ?? '',
            e.reason ?? '',
            truncate(`${e.message ?? ''}${(e.count ?? 1) > 1 ? ` (x${e.count})` : ''}`, 120),
          ]),
        ),
      ),
    );
  }
  const hint = nextStepHint(txn);
  if (hint) lines.push(hint, '');
  // Messages come from targets (a kubelet's, an operator's), API errors and annotations: none of
  // their control characters reaches the terminal.
  return printable(`${lines.join('\n').replace(/\n+$/, '')}\n`);
}

function indent(text: string): string {
  return text
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')
    .concat('\n');
}

/** The last `max` Events, oldest first. */
export function recentEvents(events: readonly TransactionEvent[], max: number): TransactionEvent[] {
  const at = (e: TransactionEvent) =>
    Date.parse(e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? '') || 0;
  return [...events].sort((a, b) => at(a) - at(b)).slice(-max);
}

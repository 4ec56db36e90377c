/**
 * The outcome of a Transaction as the results branch records it: a YAML file an auditor can read
 * without cluster access, and a commit whose subject says what happened. Pure and deterministic:
 * rendering the same state twice gives the same bytes, so re-writing a result is a no-op.
 */
import { stringify } from 'yaml';
import {
  ANNOTATION_SOURCE_LEFT,
  ANNOTATION_SOURCE_RENDER_DIGEST,
  type Change,
  type Condition,
  type HealthCheckStatus,
  type ItemStatus,
  type Transaction,
} from '../api/v1alpha1/index.ts';
import { summaryCondition } from '../saga/status.ts';
import { formatCommitMessage } from './commit-message.ts';
import {
  RESULT_API_VERSION,
  RESULT_KIND,
  type ResultContext,
  renderSource,
  resultPath,
  sourceCommit,
  sourceOf,
} from './result-context.ts';
import type { ResultRecord } from './result-record.ts';

export type ChangeOutcome = 'pending' | 'prepared' | 'committed' | 'rolled-back' | 'conflict' | 'failed';

interface Counts {
  total: number;
  committed: number;
  rolledBack: number;
  conflicts: number;
}

export function renderTransactionResult(txn: Transaction, context: ResultContext): ResultRecord {
  const namespace = txn.metadata.namespace ?? 'default';
  const id = `${namespace}/${txn.metadata.name}`;
  const status = txn.status ?? {};
  const phase = status.phase ?? 'Pending';
  const items = status.items ?? [];
  const source = sourceOf(txn, context);
  const counts = countItems(txn.spec.changes.length, items);
  const message = summaryCondition(status.conditions ?? [])?.message;
  const document = {
    apiVersion: RESULT_API_VERSION,
    kind: RESULT_KIND,
    transaction: { namespace, name: txn.metadata.name, ...(txn.metadata.uid && { uid: txn.metadata.uid }) },
    phase,
    progress: `${counts.committed}/${counts.total}`,
    ...(message && { message }),
    source: renderSource(source),
    ...(txn.spec.sourceRef && { render: renderOfSource(txn) }),
    serviceAccountName: txn.spec.serviceAccountName,
    ...(status.startedAt && { startedAt: status.startedAt }),
    ...(status.completedAt && { completedAt: status.completedAt }),
    ...(status.health?.startedAt && { health: renderHealth(status.health) }),
    changes: txn.spec.changes.map((change, i) => renderChange(change, items[i], namespace)),
    ...(status.conditions &&
      status.conditions.length > 0 && { conditions: status.conditions.map(renderCondition) }),
    recordedBy: { controller: `janus ${context.controllerVersion}`, identity: context.identity },
  };
  const commit = sourceCommit(source.revision);
  const body = [
    message ?? '',
    source.path ? `Source: ${source.path}${source.revision ? ` at ${source.revision}` : ''}` : '',
  ];
  return {
    files: { [resultPath(namespace, txn.metadata.name)]: stringify(document, { lineWidth: 0 }) },
    message: formatCommitMessage(`${id}: ${phase} (${describeCounts(phase, counts)})`, body, {
      transaction: id,
      phase,
      ...(commit && { source: commit }),
      ...(txn.spec.sourceRef && { sourceName: `${namespace}/${txn.spec.sourceRef.name}` }),
    }),
  };
}

/**
 * A source's transaction (docs/sources.md): the source, the digest of the commit's render, and what
 * the render dropped that the transaction leaves in the cluster, and why.
 */
function renderOfSource(txn: Transaction) {
  const annotations = txn.metadata.annotations ?? {};
  const digest = annotations[ANNOTATION_SOURCE_RENDER_DIGEST];
  const left = leftInCluster(annotations);
  return {
    source: txn.spec.sourceRef?.name,
    ...(digest && { digest }),
    ...(left.length > 0 && { left: left.map((l) => l.message) }),
  };
}

/** Sentences a source's transaction's ANNOTATION_SOURCE_LEFT may hold: 32 and "… and N more". */
const MAX_LEFT = 33;

/** One entry of ANNOTATION_SOURCE_LEFT (src/sources/source-transaction.ts leftAnnotation). */
export interface LeftEntry {
  apiVersion?: string;
  kind?: string;
  namespace?: string;
  name?: string;
  reason?: string;
  message: string;
}

/** The entries of ANNOTATION_SOURCE_LEFT; [] when absent or not such a list. */
export function leftInCluster(annotations: Readonly<Record<string, string>>): LeftEntry[] {
  let value: unknown;
  try {
    value = JSON.parse(annotations[ANNOTATION_SOURCE_LEFT] ?? '[]');
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return [];
  const strings = (o: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(o).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
  return value
    .filter(
      (e): e is Record<string, unknown> =>
        typeof e === 'object' && e !== null && typeof e.message === 'string',
    )
    .slice(0, MAX_LEFT)
    .map((e) => strings(e) as unknown as LeftEntry);
}

function countItems(total: number, items: readonly ItemStatus[]): Counts {
  return {
    total,
    committed: items.filter((i) => i.committed).length,
    rolledBack: items.filter((i) => i.rolledBack).length,
    conflicts: items.filter((i) => i.conflict).length,
  };
}

/** The parenthesized part of the subject, e.g. "3/3 changes". */
export function describeCounts(phase: string, c: Counts): string {
  switch (phase) {
    case 'RolledBack':
      return `${c.rolledBack}/${c.committed} changes rolled back`;
    case 'RollingBack':
      return `undoing ${c.committed}/${c.total} committed changes`;
    case 'Failed': {
      const parts = [`${c.committed}/${c.total} committed`];
      if (c.rolledBack > 0) parts.push(`${c.rolledBack} rolled back`);
      if (c.conflicts > 0) parts.push(`${c.conflicts} in conflict`);
      return parts.join(', ');
    }
    default:
      return `${c.committed}/${c.total} changes`;
  }
}

export function changeOutcome(item: ItemStatus | undefined): ChangeOutcome {
  if (!item) return 'pending';
  if (item.conflict) return 'conflict';
  if (item.rolledBack) return 'rolled-back';
  if (item.committed) return 'committed';
  if (item.error) return 'failed';
  return item.prepared ? 'prepared' : 'pending';
}

function renderChange(change: Change, item: ItemStatus | undefined, namespace: string) {
  const target = change.target;
  const targetNamespace = target.namespace ?? namespace;
  return {
    target: item?.target ?? `${target.apiVersion} ${target.kind} ${targetNamespace}/${target.name}`,
    type: change.type,
    outcome: changeOutcome(item),
    ...(item?.error && { error: item.error }),
    ...(item?.health && {
      health: { status: item.health.status, reason: item.health.reason, message: item.health.message },
    }),
  };
}

/** The health gate's last check: what it checked, how it ended, and how long it took. */
function renderHealth(h: HealthCheckStatus) {
  const start = Date.parse(h.startedAt ?? '');
  const end = Date.parse(h.completedAt ?? '');
  const seconds = Number.isNaN(start) || Number.isNaN(end) ? undefined : Math.round((end - start) / 1000);
  return {
    check: h.check,
    result: h.result ?? 'Pending',
    ...(h.startedAt && { startedAt: h.startedAt }),
    ...(h.completedAt && { completedAt: h.completedAt }),
    ...(seconds !== undefined && { seconds }),
    ...(h.message && { message: h.message }),
  };
}

function renderCondition(c: Condition) {
  return {
    type: c.type,
    status: c.status,
    reason: c.reason,
    ...(c.message && { message: c.message }),
    lastTransitionTime: c.lastTransitionTime,
  };
}

/**
 * What the web view shows of a Transaction, computed here from the object the API server sent
 * (the browser only lays it out): a row of the list, and the whole story of one. The words are
 * the CLI's: the outcome of a change (results/), the requests table's verdicts and refusals
 * (api/requests.ts), the bake window's length (saga/bake-window.ts). Pure.
 *
 * Times stay timestamps: the page counts the bake window down itself, between two updates.
 */
import { acceptance, phaseOf, type RequestKind } from '../api/requests.ts';
import type { Transaction } from '../api/v1alpha1/index.ts';
import type { ShownEvent } from '../kube/events.ts';
import { type ChangeOutcome, changeOutcome } from '../results/index.ts';
import { stableForMs } from '../saga/bake-window.ts';
import { unrolledCommits } from '../saga/decide.ts';

export interface TransactionRow {
  /** "<namespace>/<name>" */
  key: string;
  namespace: string;
  name: string;
  phase: string;
  /** Committed changes over all: "2/3". */
  progress: string;
  created: string | undefined;
  /** The Ready condition's reason. */
  reason: string;
  /** Set in the bake window: the page shows its countdown. */
  bake?: BakeWindow;
  /** Where it came from: "<repository> <path>", for a transaction from Git. */
  source?: string;
}

export interface BakeWindow {
  /** When every target was first healthy. */
  stableSince: string;
  stableForMs: number;
}

const keyOf = (txn: Transaction) => `${txn.metadata.namespace}/${txn.metadata.name}`;

function readyOf(txn: Transaction) {
  return txn.status?.conditions?.find((c) => c.type === 'Ready');
}

/** "2/3": committed changes over all changes. */
export function progressOf(txn: Transaction): string {
  if (txn.status?.progress) return txn.status.progress;
  const committed = (txn.status?.items ?? []).filter((i) => i.committed).length;
  return `${committed}/${txn.spec.changes.length}`;
}

/** The open bake window, if the commit check is in one. */
export function bakeWindowOf(txn: Transaction): BakeWindow | undefined {
  const health = txn.status?.health;
  if (health?.check !== 'Commit' || !health.stableSince || health.completedAt) return undefined;
  return { stableSince: health.stableSince, stableForMs: stableForMs(txn) };
}

export function transactionRow(txn: Transaction): TransactionRow {
  const bake = bakeWindowOf(txn);
  const source = txn.status?.source;
  return {
    key: keyOf(txn),
    namespace: txn.metadata.namespace ?? '',
    name: txn.metadata.name,
    phase: phaseOf(txn),
    progress: progressOf(txn),
    created: txn.metadata.creationTimestamp,
    reason: readyOf(txn)?.reason ?? '',
    ...(bake && { bake }),
    ...(source?.repository && { source: [source.repository, source.path].filter(Boolean).join(' ') }),
  };
}

export interface ChangeView {
  index: number;
  type: string;
  target: string;
  outcome: ChangeOutcome;
  health?: { status: string; reason: string; message: string };
  error?: string;
  /** The lock Lease, "<namespace>/<name>". */
  lease?: string;
}

export interface ActionView {
  /** What the button sends. */
  request: RequestKind;
  label: string;
  /** What the confirmation says will happen. */
  explanation: string;
}

export interface AnalysisView {
  name: string;
  measured: number;
  failed: number;
  nextAt?: string;
  measurements: { at: string; phase: string; value?: number; message: string }[];
}

export interface TimelineEntry {
  at: string;
  /** "phase": a condition's transition; "event": a Kubernetes Event. */
  kind: 'phase' | 'event';
  /** Normal or Warning for an Event; the condition's status for a phase. */
  type: string;
  reason: string;
  message: string;
  count?: number;
}

export interface TransactionDetail {
  row: TransactionRow;
  uid: string | undefined;
  ready?: { status: string; reason: string; message: string };
  serviceAccount: string;
  source?: { repository: string; path: string; revision: string; commit?: string };
  started?: string;
  deadline?: string;
  completed?: string;
  rollbackRef?: string;
  changes: ChangeView[];
  /** The order a rollback undoes the committed changes in: the last committed first. */
  undoOrder: number[];
  health?: {
    check: string;
    startedAt?: string;
    deadline?: string;
    stableSince?: string;
    stableForMs: number;
    completedAt?: string;
    result?: string;
    message?: string;
  };
  analysis: AnalysisView[];
  timeline: TimelineEntry[];
  actions: ActionView[];
  /** Why no button is offered, when none is: the requests table's words. */
  noActionBecause?: string;
}

/** A core/v1 Event, as much of it as the timeline shows. */
export type CoreEvent = ShownEvent;

/** The commit of a source revision "<branch>@sha1:<commit>". */
const commitOf = (revision: string | undefined) => /@sha1:([0-9a-f]{40})$/.exec(revision ?? '')?.[1];

export function transactionDetail(txn: Transaction, events: readonly CoreEvent[]): TransactionDetail {
  const status = txn.status ?? {};
  const ready = readyOf(txn);
  const items = status.items ?? [];
  const changes = txn.spec.changes.map((change, index): ChangeView => {
    const item = items[index];
    const namespace = change.target.namespace ?? txn.metadata.namespace;
    return {
      index,
      type: change.type,
      target:
        item?.target ??
        `${change.target.apiVersion} ${change.target.kind} ${namespace ? `${namespace}/` : ''}${change.target.name}`,
      outcome: changeOutcome(item),
      ...(item?.health && {
        health: {
          status: item.health.status ?? '',
          reason: item.health.reason ?? '',
          message: item.health.message ?? '',
        },
      }),
      ...(item?.error && { error: item.error }),
      ...(item?.lease && { lease: item.lease }),
    };
  });
  const health = status.health;
  const source = status.source;
  const commit = commitOf(source?.revision);
  const { actions, noActionBecause } = actionsOn(txn);
  return {
    row: transactionRow(txn),
    uid: txn.metadata.uid,
    ...(ready && { ready: { status: ready.status, reason: ready.reason, message: ready.message ?? '' } }),
    serviceAccount: txn.spec.serviceAccountName,
    ...(source?.repository && {
      source: {
        repository: source.repository,
        path: source.path ?? '',
        revision: source.revision ?? '',
        ...(commit && { commit }),
      },
    }),
    ...(status.startedAt && { started: status.startedAt }),
    ...(status.deadline && !status.completedAt && { deadline: status.deadline }),
    ...(status.completedAt && { completed: status.completedAt }),
    ...(status.rollbackRef && { rollbackRef: status.rollbackRef }),
    changes,
    undoOrder: items
      .map((item, index) => (item.committed ? index : -1))
      .filter((index) => index >= 0)
      .reverse(),
    ...(health?.check && {
      health: {
        check: health.check,
        stableForMs: stableForMs(txn),
        ...(health.startedAt && { startedAt: health.startedAt }),
        ...(health.deadline && { deadline: health.deadline }),
        ...(health.stableSince && { stableSince: health.stableSince }),
        ...(health.completedAt && { completedAt: health.completedAt }),
        ...(health.result && { result: health.result }),
        ...(health.message && { message: health.message }),
      },
    }),
    analysis: (health?.analysis ?? []).map((check) => ({
      name: check.name,
      measured: check.measured,
      failed: check.failed,
      ...(check.nextAt && { nextAt: check.nextAt }),
      measurements: (check.measurements ?? []).map((m) => ({
        at: m.at,
        phase: m.phase,
        message: m.message,
        ...(m.value !== undefined && { value: m.value }),
      })),
    })),
    timeline: timelineOf(txn, events),
    actions,
    ...(noActionBecause && { noActionBecause }),
  };
}

/**
 * The buttons a person gets: each request the requests table accepts now. A rollback of a
 * Failed transaction is a retry of its rollback, as `janus rollback` makes it.
 */
export function actionsOn(txn: Transaction): { actions: ActionView[]; noActionBecause?: string } {
  const id = keyOf(txn);
  const actions: ActionView[] = [];
  const cancel = acceptance('cancel', txn);
  if (cancel.verdict === 'accept') {
    actions.push({
      request: 'cancel',
      label: 'Cancel',
      explanation: `Stop ${id} (${phaseOf(txn)}) and undo whatever it committed, in reverse order.`,
    });
  }
  const rollback = acceptance('rollback', txn);
  if (rollback.verdict === 'accept') {
    actions.push({
      request: 'rollback',
      label: 'Roll back',
      explanation: `Undo the ${unrolledCommits(txn)} committed change(s) of ${id}, in reverse order.`,
    });
  } else if (
    rollback.instead === 'retry-rollback' &&
    acceptance('retry-rollback', txn).verdict === 'accept'
  ) {
    actions.push({
      request: 'retry-rollback',
      label: 'Retry rollback',
      explanation: `Try again to undo the ${unrolledCommits(txn)} change(s) of ${id} still standing; a target someone else changed is left alone.`,
    });
  }
  if (actions.length > 0) return { actions };
  const why = [cancel, rollback].find((a) => a.message)?.message;
  return { actions, ...(why && { noActionBecause: why }) };
}

const eventTime = (e: CoreEvent) =>
  e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp ?? '';

/** The phases (condition transitions, start, end) and the Events, oldest first. */
export function timelineOf(txn: Transaction, events: readonly CoreEvent[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [];
  if (txn.metadata.creationTimestamp) {
    entries.push({
      at: txn.metadata.creationTimestamp,
      kind: 'phase',
      type: 'True',
      reason: 'Created',
      message: '',
    });
  }
  for (const c of txn.status?.conditions ?? []) {
    entries.push({
      at: c.lastTransitionTime,
      kind: 'phase',
      type: c.status,
      reason: `${c.type}: ${c.reason}`,
      message: c.message ?? '',
    });
  }
  for (const e of events) {
    const at = eventTime(e);
    if (!at) continue;
    entries.push({
      at,
      kind: 'event',
      type: e.type ?? 'Normal',
      reason: e.reason ?? '',
      message: e.message ?? '',
      ...((e.count ?? 1) > 1 && { count: e.count }),
    });
  }
  return entries.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
}

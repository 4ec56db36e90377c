/**
 * What a Source's status says after each step of its Git side (docs/sources.md, "The `Source`
 * object"): a commit attempted (its transaction in flight), its outcome, a render that failed or
 * was refused, a render that needs no transaction. lastApplied and the inventory move only when
 * the cluster holds the commit's render; the conditions follow kstatus (Ready, Reconciling,
 * Stalled), so `kubectl wait` and Flux and Argo CD health checks read a Source as they read a
 * Transaction. Every string is fitted to the schema. Pure.
 */
import { fitToSchema } from '../api/fit.ts';
import {
  type Condition,
  type InventoryEntry,
  type SourceOutcome,
  type SourceStatus,
  sourceStatusSchema,
} from '../api/v1alpha1/index.ts';
import { type ConditionSpec, mergeConditions } from '../saga/status.ts';
import { withoutCorrectionBackoff } from './drift-decision.ts';

/** The commit a status names: in full, its first 7 hex, and the Transaction (or its would-be name). */
export interface Revision {
  revision: string;
  transaction: string;
}

type Attempted = NonNullable<SourceStatus['lastAttempted']>;

const STATUS = sourceStatusSchema.openApi;

function attempted(r: Revision, outcome: SourceOutcome, extra: Partial<Attempted> = {}): Attempted {
  return {
    revision: r.revision,
    shortRevision: r.revision.slice(0, 7),
    transaction: r.transaction,
    outcome,
    ...extra,
  };
}

function withConditions(
  status: SourceStatus,
  next: SourceStatus,
  updates: readonly ConditionSpec[],
  now: Date,
  generation: number | undefined,
): SourceStatus {
  return fitToSchema(STATUS, {
    ...next,
    ...(generation !== undefined && { observedGeneration: generation }),
    conditions: mergeConditions(status.conditions, updates, now.toISOString(), generation),
  });
}

const c = (type: string, status: Condition['status'], reason: string, message: string): ConditionSpec => ({
  type,
  status,
  reason,
  message,
});

/** A commit's transaction is about to be created: written before the create (crash safety, docs/sources.md). */
export function attemptStatus(
  status: SourceStatus,
  at: Revision & { renderDigest: string },
  now: Date,
  generation?: number,
): SourceStatus {
  const message = `applying ${at.revision.slice(0, 7)} as Transaction ${at.transaction}`;
  return withConditions(
    status,
    { ...status, lastAttempted: attempted(at, 'InProgress', { renderDigest: at.renderDigest }) },
    [
      c('Ready', 'False', 'Progressing', message),
      c('Reconciling', 'True', 'Progressing', message),
      c('Stalled', 'False', 'Progressing', message),
    ],
    now,
    generation,
  );
}

/** What the source's transaction came to. */
export interface Outcome {
  phase: 'Committed' | 'RolledBack' | 'Failed';
  /** Why (the Transaction's own message). */
  message: string | undefined;
  /** When it finished (completedAt). */
  time: string | undefined;
}

/**
 * The outcome of the transaction lastAttempted names. Committed: the commit is applied and the
 * inventory is `inventory` (inventoryAfter), and a drift correction's backoff is forgotten (the
 * objects are the new commit's now); otherwise the cluster is back at lastApplied's render, and
 * the inventory stays.
 */
export function settledStatus(
  status: SourceStatus,
  outcome: Outcome,
  inventory: readonly InventoryEntry[] | undefined,
  now: Date,
  generation?: number,
): SourceStatus {
  const last = status.lastAttempted;
  if (!last?.revision || !last.transaction) return status;
  const at = { revision: last.revision, transaction: last.transaction };
  const reason = outcome.message;
  const lastAttempted = attempted(at, outcome.phase, {
    ...(last.renderDigest && { renderDigest: last.renderDigest }),
    ...(reason && { reason }),
  });
  if (outcome.phase === 'Committed') {
    const message = `${at.revision.slice(0, 7)} applied by Transaction ${at.transaction}`;
    return withConditions(
      status,
      {
        ...status,
        ...(status.drift && { drift: withoutCorrectionBackoff(status.drift) }),
        lastAttempted,
        lastApplied: {
          revision: at.revision,
          shortRevision: at.revision.slice(0, 7),
          transaction: at.transaction,
          time: outcome.time ?? now.toISOString(),
        },
        inventory: [...(inventory ?? status.inventory ?? [])],
      },
      [
        c('Ready', 'True', 'Committed', message),
        c('Reconciling', 'False', 'Committed', message),
        c('Stalled', 'False', 'Committed', message),
      ],
      now,
      generation,
    );
  }
  return stalled(status, lastAttempted, outcome.phase, failedMessage(at, outcome), now, generation);
}

function failedMessage(at: Revision, outcome: Outcome): string {
  const back = 'the cluster is back at the last applied commit';
  return `${at.revision.slice(0, 7)} ${outcome.phase === 'RolledBack' ? 'rolled back' : 'failed'} (Transaction ${at.transaction}): ${outcome.message ?? back}; the source waits for a commit that changes its render`;
}

/** A commit whose render failed, or was refused (policy, bounds, an invalid declaration): nothing applied. */
export function refusedStatus(
  status: SourceStatus,
  at: Revision,
  outcome: 'RenderFailed' | 'Refused',
  reason: string,
  now: Date,
  generation?: number,
): SourceStatus {
  const lastAttempted = attempted(at, outcome, { reason });
  const what = outcome === 'RenderFailed' ? 'its render failed' : 'it was refused';
  const message = `${at.revision.slice(0, 7)}: ${what}, nothing was applied: ${reason}`;
  return stalled(status, lastAttempted, outcome, message, now, generation);
}

function stalled(
  status: SourceStatus,
  lastAttempted: Attempted,
  reason: string,
  message: string,
  now: Date,
  generation: number | undefined,
): SourceStatus {
  return withConditions(
    status,
    { ...status, lastAttempted },
    [
      c('Ready', 'False', reason, message),
      c('Reconciling', 'False', reason, message),
      c('Stalled', 'True', reason, message),
    ],
    now,
    generation,
  );
}

/**
 * A commit whose render the cluster already holds (nothing to apply or prune): the source is at
 * it without a transaction; the inventory forgets what the render dropped and was left behind.
 * lastApplied keeps the transaction that applied these objects.
 */
export function unchangedStatus(
  status: SourceStatus,
  at: { revision: string; renderDigest: string },
  inventory: readonly InventoryEntry[],
  now: Date,
  generation?: number,
): SourceStatus {
  const transaction = status.lastApplied?.transaction ?? '';
  const message = `${at.revision.slice(0, 7)}: the cluster already holds its render; nothing to apply`;
  return withConditions(
    status,
    {
      ...status,
      lastAttempted: attempted({ revision: at.revision, transaction }, 'Committed', {
        renderDigest: at.renderDigest,
        reason: 'nothing to apply: the render is what the source last applied',
      }),
      lastApplied: {
        revision: at.revision,
        shortRevision: at.revision.slice(0, 7),
        transaction,
        time: now.toISOString(),
      },
      inventory: [...inventory],
    },
    [
      c('Ready', 'True', 'Unchanged', message),
      c('Reconciling', 'False', 'Unchanged', message),
      c('Stalled', 'False', 'Unchanged', message),
    ],
    now,
    generation,
  );
}

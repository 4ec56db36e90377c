/**
 * Which phase accepts which request, written once for everyone who asks and for the one who
 * answers: `janus rollback`, `janus cancel` and `janus recover` ask, a ROLLBACK file in Git asks,
 * and the controller (saga/decide.ts) carries the request out or drops its annotation. Pure.
 *
 * A request is a one-shot annotation on the Transaction (its value the reason); the controller
 * removes it once it has acted on it or found that it does not apply. A new kind of request is a
 * new row here: its annotation, and its verdict in every phase.
 */
import {
  ANNOTATION_CANCEL,
  ANNOTATION_REQUEST_ROLLBACK,
  ANNOTATION_RETRY_ROLLBACK,
  PHASES,
  type Phase,
  type Transaction,
} from './v1alpha1/index.ts';

export type RequestKind = 'cancel' | 'rollback' | 'retry-rollback';

/** In the order the controller takes them when several are set: a cancel outranks the rest. */
export const REQUEST_KINDS: readonly RequestKind[] = ['cancel', 'rollback', 'retry-rollback'];

export const REQUEST_ANNOTATIONS: Readonly<Record<RequestKind, string>> = {
  cancel: ANNOTATION_CANCEL,
  rollback: ANNOTATION_REQUEST_ROLLBACK,
  'retry-rollback': ANNOTATION_RETRY_ROLLBACK,
};

export type Verdict =
  /** The controller carries it out now. */
  | 'accept'
  /** Not yet: the controller keeps the annotation and judges it again once the phase changes. */
  | 'wait'
  /** What it asks is already happening. */
  | 'underway'
  /** Nothing is left for it to do. */
  | 'done'
  /** It does not apply in this phase. */
  | 'refuse';

/** The Transaction as a message names it. */
export interface Subject {
  /** "<namespace>/<name>" */
  id: string;
  name: string;
  namespace: string;
  phase: Phase;
}

export interface Rule {
  verdict: Verdict;
  /** What to say instead of acting (for every verdict but accept), of the transaction at hand. */
  says?: (s: Subject) => string;
  /** Refused, but this other request is what the asker means in this phase. */
  instead?: RequestKind;
}

const stillApplied = (s: Subject) =>
  `${s.id} is ${s.phase}: it is still being applied, and rolls back by itself if a change fails. ` +
  `Once it is Committed, run janus rollback again (follow it with: janus status ${s.name} -n ${s.namespace} --watch)`;
const rollingBack = (s: Subject) => `${s.id} is already rolling back`;
const rolledBack = (s: Subject) => `${s.id} is already rolled back`;

const IN_FLIGHT = ['Pending', 'Preparing', 'Prepared', 'Committing', 'Verifying'] as const;
const each = (rule: Rule) =>
  Object.fromEntries(IN_FLIGHT.map((p) => [p, rule])) as Record<(typeof IN_FLIGHT)[number], Rule>;

/** Every request in every phase. */
export const REQUEST_TABLE: Readonly<Record<RequestKind, Readonly<Record<Phase, Rule>>>> = {
  cancel: {
    ...each({ verdict: 'accept' }),
    RollingBack: { verdict: 'underway', says: rollingBack },
    Committed: {
      verdict: 'refuse',
      says: (s) =>
        `${s.id} is already Committed: there is nothing in flight to cancel. To undo it: janus rollback ${s.name} -n ${s.namespace}`,
    },
    RolledBack: { verdict: 'done', says: rolledBack },
    Failed: {
      verdict: 'refuse',
      says: (s) =>
        `${s.id} has already ended Failed: nothing is in flight. janus status ${s.name} -n ${s.namespace} says what is left`,
    },
  },
  rollback: {
    // A transaction being applied is rolled back once it is Committed; until then it undoes
    // itself if a change fails.
    ...each({ verdict: 'wait', says: stillApplied }),
    RollingBack: { verdict: 'underway', says: rollingBack },
    Committed: { verdict: 'accept' },
    RolledBack: { verdict: 'done', says: rolledBack },
    Failed: {
      verdict: 'refuse',
      instead: 'retry-rollback',
      says: (s) =>
        `${s.id} is Failed: request-rollback applies to Committed transactions; to retry its rollback: janus rollback ${s.name} -n ${s.namespace} (it sets retry-rollback)`,
    },
  },
  'retry-rollback': {
    ...each({ verdict: 'wait', says: stillApplied }),
    // A retry asked while an automatic one runs is judged once that one has ended.
    RollingBack: {
      verdict: 'wait',
      says: (s) => `${s.id} is RollingBack: its rollback is running; wait for it to end`,
    },
    Committed: {
      verdict: 'refuse',
      says: (s) =>
        `${s.id} is Committed: retry-rollback applies to Failed transactions; to undo it: janus rollback ${s.name} -n ${s.namespace}`,
    },
    RolledBack: { verdict: 'done', says: rolledBack },
    // See acceptance(): a Failed transaction that committed nothing has nothing to roll back.
    Failed: { verdict: 'accept' },
  },
};

export interface Acceptance {
  verdict: Verdict;
  /** Why not (empty for accept). */
  message: string;
  instead?: RequestKind;
}

export const phaseOf = (txn: Transaction): Phase => txn.status?.phase ?? 'Pending';

/** A phase as a results record or any other text names it. */
export const isPhase = (text: string): text is Phase => (PHASES as readonly string[]).includes(text);

/** The verdict of `request` in `phase`, when only the phase is known (a results record). */
export function verdictIn(request: RequestKind, phase: Phase): Verdict {
  return REQUEST_TABLE[request][phase].verdict;
}

/** What `request` meets on this Transaction now. */
export function acceptance(request: RequestKind, txn: Transaction): Acceptance {
  const phase = phaseOf(txn);
  const subject: Subject = {
    id: `${txn.metadata.namespace}/${txn.metadata.name}`,
    name: txn.metadata.name,
    namespace: txn.metadata.namespace ?? '',
    phase,
  };
  // Any committed change counts, even one already undone: the retry then finds nothing left
  // and ends RolledBack (a rollback that failed its health check, say).
  if (
    request === 'retry-rollback' &&
    phase === 'Failed' &&
    !(txn.status?.items ?? []).some((i) => i.committed)
  ) {
    return {
      verdict: 'done',
      message: `${subject.id} failed before any change was committed: nothing is left to roll back`,
    };
  }
  const rule = REQUEST_TABLE[request][phase];
  return {
    verdict: rule.verdict,
    message: rule.says?.(subject) ?? '',
    ...(rule.instead && { instead: rule.instead }),
  };
}

/**
 * Whether asking now leaves the controller something to do. An asker that can come back later
 * (a person at the CLI) is told to; a ROLLBACK file is read once, so its request may wait.
 */
export function leavesWork(verdict: Verdict, mayWait: boolean): boolean {
  return verdict === 'accept' || (mayWait && verdict === 'wait');
}

/** The requests set on this Transaction, in the order the controller takes them. */
export function requestsOn(txn: Transaction): RequestKind[] {
  const annotations = txn.metadata.annotations ?? {};
  return REQUEST_KINDS.filter((r) => REQUEST_ANNOTATIONS[r] in annotations);
}

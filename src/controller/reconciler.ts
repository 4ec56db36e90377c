/**
 * One reconcile of one Transaction: decide the next step from its state (pure), carry it out
 * (a stage), and repeat with the state the stage wrote, until the saga must wait for time, a
 * lock, or a change. Stages continue from their own writes, never from a possibly stale cache.
 */
import type { Transaction } from '../api/v1alpha1/index.ts';
import { decide, type Step, wakeUpAt } from '../saga/decide.ts';
import { type SagaDeps, SagaRun } from './context.ts';
import { adopt, markConflict, otherWriter } from './installation-conflict.ts';
import { commit } from './stages/commit.ts';
import { addFinalizer, beginRollback, cleanup, dropAnnotation, finalize } from './stages/lifecycle.ts';
import type { StageOutcome, StageResult } from './stages/outcomes.ts';
import { prepare } from './stages/prepare.ts';
import { rollback } from './stages/rollback.ts';
import { start } from './stages/start.ts';
import { verify } from './stages/verify.ts';

export interface ReconcileResult {
  /** Look at this Transaction again after this long, even if nothing changes. */
  requeueAfterMs?: number;
  /** The Transaction as last written (undefined if it was not written). */
  txn?: Transaction;
}

/** A safety net: a saga needs at most ~8 steps (finalizer, start, prepare, commit, cleanup …). */
const MAX_STEPS = 16;

export class Reconciler {
  readonly #deps: SagaDeps;

  constructor(deps: SagaDeps) {
    this.#deps = deps;
  }

  async reconcile(txn: Transaction): Promise<ReconcileResult> {
    let current = txn;
    let written: Transaction | undefined;
    // Written by another installation of this instance: not driven while it is alive, taken over once it is gone.
    const other = otherWriter(txn, this.#deps.controllerNamespace);
    if (other !== undefined) {
      if (this.#deps.isLiveInstallation(other)) {
        return { requeueAfterMs: await markConflict(this.#deps, txn, other) };
      }
      const adopted = await adopt(this.#deps, txn, other);
      if (!adopted) return { requeueAfterMs: 1_000 };
      current = adopted;
      written = adopted;
    }
    for (let n = 0; n < MAX_STEPS; n++) {
      const step = decide(current, this.#deps.now());
      if (step.do === 'nothing')
        return { ...wake(current, this.#deps.now()), ...(written && { txn: written }) };
      if (step.do === 'wait') {
        return {
          requeueAfterMs: Math.max(0, step.untilMs - this.#deps.now()),
          ...(written && { txn: written }),
        };
      }
      this.#deps.log.debug(
        {
          transaction: `${current.metadata.namespace}/${current.metadata.name}`,
          phase: current.status?.phase,
          step: step.do,
        },
        'step',
      );
      const run = await SagaRun.start(this.#deps, current);
      const result = await execute(run, step);
      if ('requeueAfterMs' in result) return { ...result, ...(written && { txn: written }) };
      current = result.txn;
      written = current;
    }
    this.#deps.log.warn(
      { transaction: `${txn.metadata.namespace}/${txn.metadata.name}` },
      'reconcile took too many steps',
    );
    return { requeueAfterMs: 1000, txn: current };
  }
}

function wake(txn: Transaction, now: number): ReconcileResult {
  const at = wakeUpAt(txn);
  return at === undefined ? {} : { requeueAfterMs: Math.max(0, at - now) + 10 };
}

type Act = Exclude<Step, { do: 'nothing' | 'wait' }>;

/**
 * Runs the step's stage. A stage that made (or undid) the changes may enter the health check:
 * the first look comes at once, in the same step, before anything is written.
 */
async function execute(run: SagaRun, step: Act): Promise<StageResult> {
  const outcome = await stage(run, step);
  return 'enterCheck' in outcome ? verify(run, outcome.enterCheck) : outcome;
}

function stage(run: SagaRun, step: Act): Promise<StageOutcome> {
  switch (step.do) {
    case 'finalize':
      return finalize(run);
    case 'addFinalizer':
      return addFinalizer(run);
    case 'start':
      return start(run);
    case 'prepare':
      return prepare(run);
    case 'commit':
      return commit(run);
    case 'rollback':
      return rollback(run);
    case 'verify':
      return verify(run);
    case 'beginRollback':
      return beginRollback(run, step.cause, step.consumeAnnotation);
    case 'dropAnnotation':
      return dropAnnotation(run, step.annotation, step.why);
    case 'cleanup':
      return cleanup(run);
  }
}

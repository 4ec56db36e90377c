/**
 * Runs background tasks (metric measurements) beside the work queue's workers, so that a slow
 * task (a request held open by a black-holed address) never holds a worker. A reconcile asks for
 * a task and returns; when the task settles the runner calls `onSettled`, which requeues its
 * owner, and the next reconcile takes the result. What runs and what waits is slot-rules.ts's
 * (a global cap and a per-group cap); this class carries it out: it starts the tasks, aborts
 * those cancelled, and keeps the results until taken.
 *
 * Nothing here is the truth: a result lives in memory until the caller takes it and records it.
 * Lost to a crash, the task is simply asked for again by the next process.
 */
import { type Logger, silentLogger } from '../log/index.ts';
import { guardHooks } from './guard-hooks.ts';
import {
  admit,
  ask,
  cancel,
  NO_SLOTS,
  type SlotCaps,
  type SlotState,
  type Slots,
  type SlotTask,
  settle,
  stateOf,
  take,
} from './slot-rules.ts';

export interface RunnableTask<R> extends SlotTask {
  /** The work; `signal` aborts when the task is cancelled or the runner stops. */
  run(signal: AbortSignal): Promise<R>;
  /** Called once the task has settled and its result can be taken (not when it was cancelled). */
  onSettled?(): void;
}

export type TaskResult<R> = { ok: true; value: R } | { ok: false; error: unknown };

/** Gauges, after every change. */
export interface SlotRunnerMetrics {
  running?(n: number): void;
  waiting?(n: number): void;
}

export interface SlotRunnerOptions {
  caps: SlotCaps;
  metrics?: SlotRunnerMetrics | undefined;
  logger?: Logger | undefined;
}

export class SlotRunner<R> {
  readonly #caps: SlotCaps;
  readonly #metrics: SlotRunnerMetrics;
  #slots: Slots<RunnableTask<R>> = NO_SLOTS;
  readonly #aborts = new Map<string, AbortController>();
  readonly #results = new Map<string, TaskResult<R>>();
  #stopped = false;

  constructor(opts: SlotRunnerOptions) {
    this.#caps = opts.caps;
    const logger = opts.logger ?? silentLogger();
    this.#metrics = guardHooks(opts.metrics, ['running', 'waiting'], (err, hook) =>
      logger.error({ err, hook }, 'slot runner metrics hook failed'),
    );
  }

  stateOf(key: string): SlotState | undefined {
    return stateOf(this.#slots, key);
  }

  /** Asks for a task (once per key: asking again changes nothing); it starts when a slot is free. */
  start(task: RunnableTask<R>): void {
    if (this.#stopped) return;
    const asked = ask(this.#slots, task);
    if (asked === this.#slots) return;
    this.#slots = asked;
    this.#admit();
  }

  /** The result of a finished task, handed over once; undefined while it waits or runs. */
  take(key: string): TaskResult<R> | undefined {
    const result = this.#results.get(key);
    if (!result) return undefined;
    this.#results.delete(key);
    this.#slots = take(this.#slots, key);
    return result;
  }

  /** Cancels an owner's tasks, but those in `keep`: waiting ones dropped, running ones aborted. */
  cancel(owner: string, keep?: ReadonlySet<string>): void {
    const { slots, abort } = cancel(this.#slots, owner, keep);
    if (slots === this.#slots) return;
    const gone = [...this.#slots.waiting, ...this.#slots.finished].filter((t) => t.owner === owner);
    for (const t of gone) if (!keep?.has(t.key)) this.#results.delete(t.key);
    this.#slots = slots;
    for (const t of abort) {
      this.#aborts.get(t.key)?.abort();
      this.#aborts.delete(t.key);
    }
    this.#admit();
  }

  /**
   * Aborts every task and forgets every result; nothing starts after. It does not wait for the
   * tasks to end: their results are of no use, and a drain must not wait on a slow address.
   */
  stop(): void {
    this.#stopped = true;
    for (const controller of this.#aborts.values()) controller.abort();
    this.#aborts.clear();
    this.#slots = NO_SLOTS;
    this.#results.clear();
    this.#report();
  }

  #admit(): void {
    const { slots, start } = admit(this.#slots, this.#caps);
    this.#slots = slots;
    for (const task of start) this.#run(task);
    this.#report();
  }

  #run(task: RunnableTask<R>): void {
    const controller = new AbortController();
    this.#aborts.set(task.key, controller);
    const done = (result: TaskResult<R>) => {
      // Cancelled meanwhile (or stopped): nobody waits for this result.
      if (this.#aborts.get(task.key) !== controller) return;
      this.#aborts.delete(task.key);
      this.#results.set(task.key, result);
      this.#slots = settle(this.#slots, task.key);
      this.#admit();
      task.onSettled?.();
    };
    void Promise.resolve()
      .then(() => task.run(controller.signal))
      .then(
        (value) => done({ ok: true, value }),
        (error: unknown) => done({ ok: false, error }),
      );
  }

  #report(): void {
    this.#metrics.running?.(this.#slots.running.length);
    this.#metrics.waiting?.(this.#slots.waiting.length);
  }
}

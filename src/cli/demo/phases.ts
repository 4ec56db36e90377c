/**
 * The Transactions' phases as the demo narrates them. One watch runs from the first wait to the
 * end of the story, so a phase that comes and goes while the story does something else (commits
 * release 3, describes the pods) is still shown, in order, by the next wait: a watch started
 * anew for each wait would list the current state and miss the phases in between.
 */
import { isTerminal, type Transaction } from '../../api/v1alpha1/index.ts';
import type { Objects } from '../../kube/resources.ts';
import { observeTransactions } from '../transactions.ts';
import type { Narrator } from './progress.ts';

export function phaseLine(txn: Transaction): string {
  const phase = txn.status?.phase ?? 'Pending';
  const id = `${txn.metadata.namespace}/${txn.metadata.name}`;
  const condition = txn.status?.conditions?.find((c) =>
    phase === 'Failed'
      ? c.type === 'Stalled'
      : isTerminal(phase)
        ? c.type === 'Ready'
        : c.type === 'Reconciling',
  );
  const why = condition?.message ? ` — ${condition.message}` : '';
  return `${id.padEnd(22)} ${phase.padEnd(11)}${why}`.trimEnd();
}

export const phaseIs = (txns: readonly Transaction[], name: string, phase: string) =>
  txns.some((t) => t.metadata.name === name && t.status?.phase === phase);

/** Narrates phase changes; remembers what it showed, so a later wait shows only what is new. */
export class PhaseFollower {
  readonly #shown = new Map<string, string>();
  readonly #narrator: Narrator;
  /** Snapshots the watch received that no wait has narrated yet, oldest first. */
  readonly #pending: Transaction[][] = [];
  readonly #stopped = new AbortController();
  #wake: (() => void) | undefined;
  #ended: { error: unknown } | undefined;

  /** Starts watching the namespace's Transactions until `stop()` or `lifetime` ends. */
  constructor(objects: Objects, namespace: string, narrator: Narrator, lifetime: AbortSignal) {
    this.#narrator = narrator;
    const signal = AbortSignal.any([lifetime, this.#stopped.signal]);
    void this.#watch(objects, namespace, signal);
  }

  stop(): void {
    this.#stopped.abort();
  }

  async #watch(objects: Objects, namespace: string, signal: AbortSignal): Promise<void> {
    try {
      for await (const txns of observeTransactions(objects.client, { namespace }, signal)) {
        this.#pending.push(txns);
        this.#wake?.();
      }
      this.#ended = { error: new Error('stopped watching Transactions') };
    } catch (e) {
      this.#ended = { error: e };
    }
    this.#wake?.();
  }

  /**
   * Shows each new phase in the namespace until `done` holds for its Transactions. `signal` ends
   * the wait early (Ctrl-C, the main job exiting, the time limit).
   */
  async until(done: (txns: readonly Transaction[]) => boolean, signal: AbortSignal): Promise<void> {
    for (;;) {
      for (let txns = this.#pending.shift(); txns; txns = this.#pending.shift()) {
        this.#narrate(txns);
        if (done(txns)) return;
      }
      signal.throwIfAborted();
      if (this.#ended) throw this.#ended.error;
      await this.#next(signal);
    }
  }

  #narrate(txns: readonly Transaction[]): void {
    for (const txn of txns) {
      // Once per phase: the message alone may change often (e.g. while waiting for a lock).
      const phase = txn.status?.phase ?? 'Pending';
      if (this.#shown.get(txn.metadata.name) !== phase) this.#narrator.detail(phaseLine(txn));
      this.#shown.set(txn.metadata.name, phase);
    }
  }

  /** Resolves when the watch delivers a snapshot or ends, or `signal` aborts. */
  #next(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.#wake = undefined;
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.#wake = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }
}

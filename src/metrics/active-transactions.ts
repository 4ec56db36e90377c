import { PHASES, type Phase } from '../api/v1alpha1/index.ts';
import { Gauge, type Registry } from './prom.ts';

export type PhaseCounts = Partial<Record<Phase, number>>;

/**
 * `janus_transactions_active{phase}`: how many Transaction resources exist in each phase.
 *
 * The value is always a snapshot of real state (the Transaction cache), never the sum
 * of increments and decrements: those drift as soon as one event is missed, a transaction is
 * deleted mid-flight or leadership moves to another replica.
 */
export class ActiveTransactions {
  readonly #gauge: Gauge<'phase'>;
  #source: (() => PhaseCounts) | undefined;

  constructor(registry: Registry) {
    const refresh = (): void => {
      if (this.#source) this.set(this.#source());
    };
    this.#gauge = new Gauge({
      name: 'janus_transactions_active',
      help: 'Transaction resources that currently exist, by phase.',
      labelNames: ['phase'] as const,
      registers: [registry],
      collect: refresh,
    });
    this.set({});
  }

  /** Sets every phase: phases missing from `counts` drop to zero, so emptied phases do not linger. */
  set(counts: PhaseCounts): void {
    for (const phase of PHASES) this.#gauge.set({ phase }, counts[phase] ?? 0);
  }

  /** Reads the counts at every scrape instead; `source` must be cheap (a cache lookup, no I/O). */
  readFrom(source: () => PhaseCounts): void {
    this.#source = source;
  }
}

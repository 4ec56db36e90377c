/** The demo's narration: numbered steps, indented details, written for someone new to Janus. */
import type { Sink } from '../output.ts';

export class Narrator {
  readonly #out: Sink;
  readonly #total: number;
  #step = 0;

  constructor(out: Sink, totalSteps: number) {
    this.#out = out;
    this.#total = totalSteps;
  }

  /** A new step: "[3/7] Installing Janus …". */
  step(text: string): void {
    this.#step++;
    this.#out.write(`\n[${this.#step}/${this.#total}] ${text}\n`);
  }

  /** A detail of the current step, indented under it. */
  detail(text: string): void {
    for (const line of text.replace(/\n$/, '').split('\n')) this.#out.write(`      ${line}\n`);
  }

  /** A line of its own, not indented. */
  say(text: string): void {
    this.#out.write(`${text}\n`);
  }
}

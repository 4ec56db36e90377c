/**
 * Undo-on-exit for the demo: every resource it starts registers how to stop it, and run() stops
 * them in reverse order exactly once — after a normal end, an error or Ctrl-C alike.
 */
export class Cleanup {
  readonly #steps: Array<{ what: string; undo: () => Promise<void> | void }> = [];
  #ran = false;

  add(what: string, undo: () => Promise<void> | void): void {
    this.#steps.push({ what, undo });
  }

  /** Runs every step, newest first; a failing step is reported and the others still run. */
  async run(report: (line: string) => void): Promise<void> {
    if (this.#ran) return;
    this.#ran = true;
    for (const step of this.#steps.reverse()) {
      report(step.what);
      try {
        await step.undo();
      } catch (e) {
        report(`  (failed: ${e instanceof Error ? e.message : String(e)})`);
      }
    }
  }
}

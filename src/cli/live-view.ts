/**
 * Output that follows changes (`janus status --watch`). In a terminal the previous rendering is
 * replaced in place; in a pipe or a log file each rendering is appended, so nothing is lost.
 */
import type { Transaction } from '../api/v1alpha1/index.ts';
import type { Sink } from './output.ts';

export class LiveView {
  readonly #sink: Sink & { columns?: number };
  readonly #inPlace: boolean;
  #shownLines = 0;

  constructor(sink: Sink & { columns?: number }, inPlace: boolean) {
    this.#sink = sink;
    this.#inPlace = inPlace;
  }

  show(text: string): void {
    if (this.#inPlace && this.#shownLines > 0) {
      // Cursor up over the previous rendering, then clear to the end of the screen.
      this.#sink.write(`\x1b[${this.#shownLines}A\x1b[J`);
    }
    this.#sink.write(text);
    this.#shownLines = screenLines(text, this.#sink.columns);
  }
}

/** Terminal rows `text` takes: lines longer than the terminal wrap. */
export function screenLines(text: string, columns: number | undefined): number {
  const lines = text.split('\n').slice(0, -1);
  if (!columns) return lines.length;
  return lines.reduce((rows, line) => rows + Math.max(1, Math.ceil(line.length / columns)), 0);
}

/**
 * Transactions whose resourceVersion differs from the last one seen, and the versions to compare
 * the next snapshot with: for appending only what changed.
 */
export function changedTransactions(
  seen: ReadonlyMap<string, string>,
  snapshot: readonly Transaction[],
): { changed: Transaction[]; seen: Map<string, string> } {
  const next = new Map<string, string>();
  const changed: Transaction[] = [];
  for (const txn of snapshot) {
    const key = `${txn.metadata.namespace}/${txn.metadata.name}`;
    const version = txn.metadata.resourceVersion ?? '';
    next.set(key, version);
    if (seen.get(key) !== version) changed.push(txn);
  }
  return { changed, seen: next };
}

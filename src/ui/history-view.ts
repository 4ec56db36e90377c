/**
 * A namespace's history as the results branch records it (results/history.ts): each outcome
 * with its record's signature state, linked to the record and the source commit on the forge
 * where the forge can be told from the repository's URL. Pure.
 */
import { commitPageUrl } from '../commit-status/forge.ts';
import type { HistoryEntry } from '../results/history.ts';
import type { RecordSignature } from '../results/record-signature.ts';

export interface HistoryEntryView extends HistoryEntry {
  signature?: RecordSignature;
  /** The record's page on the forge. */
  recordUrl?: string;
  /** The source commit's page on the forge. */
  sourceUrl?: string;
}

export interface HistoryView {
  repository: string;
  branch: string;
  tip: string | undefined;
  /** Oldest first, as a timeline reads. */
  entries: HistoryEntryView[];
  more: boolean;
  /** Whether the records' signatures were checked (an allowed-signers file was given). */
  verified: boolean;
}

export function historyView(
  repository: string,
  branch: string,
  history: {
    tip: string | undefined;
    more: boolean;
    entries: (HistoryEntry & { signature?: RecordSignature })[];
  },
  verified: boolean,
): HistoryView {
  const link = (commit: string | undefined) => (commit ? commitPageUrl(repository, commit) : undefined);
  return {
    repository,
    branch,
    tip: history.tip,
    more: history.more,
    verified,
    entries: [...history.entries].reverse().map((entry) => {
      const recordUrl = link(entry.record);
      const sourceUrl = link(entry.source);
      return { ...entry, ...(recordUrl && { recordUrl }), ...(sourceUrl && { sourceUrl }) };
    }),
  };
}

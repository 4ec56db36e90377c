/**
 * A parsed Transaction waiting, within one poll, to be created. A poll parses every directory
 * its new commits changed before it acts on any (a commit is acted on whole or not at all, see
 * poll-budget.ts), so what waits grows with the push: 400 directories of 2,400 manifests held as
 * parsed objects took ~45 MB of heap. Held as JSON text, the spec is about the size of its YAML
 * (a one-byte string), and the Transaction is rebuilt just before its create request, which
 * sends it as JSON anyway: the API server receives the same bytes.
 */
import type { Transaction } from '../api/v1alpha1/index.ts';
import type { ParseResult } from './parse-directory.ts';

/** What deciding on a directory reads (its metadata), and the rest as the JSON the API receives. */
export interface HeldTransaction extends Pick<Transaction, 'apiVersion' | 'kind' | 'metadata'> {
  readonly specJson: string;
}

export function holdTransaction({ spec, ...head }: Transaction): HeldTransaction {
  return { ...head, specJson: JSON.stringify(spec) };
}

export function releaseTransaction({ specJson, ...head }: HeldTransaction): Transaction {
  return { ...head, spec: JSON.parse(specJson) as Transaction['spec'] };
}

/** `parsed` with its Transaction (if any) held. */
export function holdParsed(parsed: ParseResult): ParseResult<HeldTransaction> {
  return parsed.ok ? { ...parsed, transaction: holdTransaction(parsed.transaction) } : parsed;
}

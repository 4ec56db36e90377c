/**
 * A parsed Transaction waiting, within one poll, to be created. A poll parses every directory
 * its new commits changed before it acts on any (a commit is acted on whole or not at all, see
 * poll-budget.ts), so what waits grows with the push: 400 directories of 2,400 manifests held as
 * parsed objects took ~45 MB of heap, as JSON text ~13 MB. Held as that JSON deflated (level 1:
 * ~30 ms for the 400, a fifth of the size or less, outside the JavaScript heap), and rebuilt
 * just before its create request, which sends it as JSON anyway: the API server receives the
 * same bytes. What decides on the directory reads only the metadata, kept as it is.
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { Transaction } from '../api/v1alpha1/index.ts';
import type { ParseResult } from './parse-directory.ts';

/** What deciding on a directory reads (its metadata), and the rest as the JSON the API receives. */
export interface HeldTransaction extends Pick<Transaction, 'apiVersion' | 'kind' | 'metadata'> {
  /** The spec's JSON, deflated (raw deflate). */
  readonly heldSpec: Uint8Array;
}

export function holdTransaction({ spec, ...head }: Transaction): HeldTransaction {
  // A copy of exactly its size: zlib's result views a larger block, which the held bytes would
  // keep alive, and which a structured clone (parse-pool.ts) would copy whole.
  return { ...head, heldSpec: new Uint8Array(deflateRawSync(JSON.stringify(spec), { level: 1 })) };
}

export function releaseTransaction({ heldSpec, ...head }: HeldTransaction): Transaction {
  return { ...head, spec: JSON.parse(inflateRawSync(heldSpec).toString('utf8')) as Transaction['spec'] };
}

/** `parsed` with its Transaction (if any) held. */
export function holdParsed(parsed: ParseResult): ParseResult<HeldTransaction> {
  return parsed.ok ? { ...parsed, transaction: holdTransaction(parsed.transaction) } : parsed;
}
